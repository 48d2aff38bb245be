"""What a training run is asked to do: the settings, their checks and the command line.

A resumed run must share :data:`MUST_MATCH` with its checkpoint, or it is not the same
run. Checkpoints written before a setting existed resume with that setting's old
behaviour (:data:`LEGACY`): a pre-bucket checkpoint resumes with ``--no-buckets``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

MUST_MATCH = (
    "base",
    "resolution",
    "rank",
    "alpha",
    "batch_size",
    "grad_accum",
    "train_text_encoder",
    "seed",
    "lr",
    "lr_scheduler",
    "snr_gamma",
    "buckets",
    "repeats",
    "caption_dropout",
    "shuffle_tags",
)
# What a checkpoint that predates a setting did; repeats None means once each.
LEGACY = {"buckets": False, "repeats": None, "caption_dropout": 0.0, "shuffle_tags": False}


@dataclass
class TrainConfig:
    datasets: list[str]  # archive zips; their union is trained on (a str is one zip)
    output_dir: str
    base: str | None = None  # Hub id or folder; None: $LORA_BASE_MODEL, then SDXL base 1.0
    resolution: int = 1024
    rank: int = 8
    alpha: float | None = None  # None: = rank (scale 1.0)
    lr: float = 1e-4
    epochs: int = 500
    max_steps: int | None = None  # wins over epochs
    batch_size: int = 1
    grad_accum: int = 1
    mixed_precision: str | None = None  # no | fp16 | bf16; None: fp16 on CUDA, no on CPU
    gradient_checkpointing: bool = False
    cache_latents: bool = False
    train_text_encoder: bool = False
    snr_gamma: float | None = None
    validation_prompt: str | None = None
    validation_every: int = 0  # 0: only at the end (when a prompt is given)
    validation_steps: int = 25
    checkpoint_every: int = 0  # 0: only at the end and on Ctrl-C
    keep_checkpoints: int = 2
    resume: bool = False
    trigger: str | None = None
    seed: int = 0
    lr_scheduler: str = "constant"
    lr_warmup_steps: int = 0
    max_grad_norm: float = 1.0
    buckets: bool = True  # aspect-ratio buckets; False: today's center crop to a square
    repeats: list[int] | None = None  # times per epoch, one per dataset; None: once each
    caption_dropout: float = 0.0  # probability of training a step on an empty caption
    shuffle_tags: bool = False  # shuffle comma-separated tags, the trigger's tag first

    def validated(self) -> TrainConfig:
        if isinstance(self.datasets, (str, Path)):
            self.datasets = [str(self.datasets)]
        self.datasets = [str(d) for d in self.datasets]
        if not self.datasets:
            raise ValueError("give at least one dataset zip")
        if self.resolution < 64 or self.resolution % 8:
            raise ValueError(f"--resolution must be a multiple of 8, >= 64, not {self.resolution}")
        for name in ("rank", "batch_size", "grad_accum", "epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("--max-steps must be at least 1")
        if self.mixed_precision not in (None, "no", "fp16", "bf16"):
            raise ValueError(f"--mixed-precision must be no, fp16 or bf16: {self.mixed_precision}")
        if not 0.0 <= self.caption_dropout < 1.0:
            raise ValueError(f"--caption-dropout must be in [0, 1), not {self.caption_dropout}")
        for d in self.datasets:
            if not Path(d).is_file():
                raise ValueError(f"dataset zip not found: {d}")
        if self.repeats is not None:
            if len(self.repeats) != len(self.datasets) or min(self.repeats) < 1:
                raise ValueError(
                    f"--repeats needs one whole number >= 1 per dataset "
                    f"({len(self.datasets)}), not {self.repeats}"
                )
            if all(r == 1 for r in self.repeats):
                self.repeats = None  # the same run as giving none
        return self

    def settings(self) -> dict[str, Any]:
        """The settings that shape the LoRA (not where the data or the output live)."""
        skip = {"datasets", "output_dir"}
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in skip}

    def record(self) -> dict[str, Any]:
        """Everything, as JSON: for ``train_config.json`` and checkpoints."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def resume_mismatch(saved: dict[str, Any], cfg: TrainConfig) -> list[str]:
    """The :data:`MUST_MATCH` settings in which ``cfg`` differs from a checkpoint's."""
    now = cfg.record()
    return [k for k in MUST_MATCH if saved.get(k, LEGACY.get(k)) != now.get(k)]


# --- the command line -------------------------------------------------------------------------


def parse_repeats(specs: list[str] | None, datasets: list[str]) -> list[int] | None:
    """``--repeats 3 1`` (one per dataset, in order) or ``--repeats small.zip=3`` (by name).

    A name matches a dataset's path, file name or stem; datasets not named repeat once.
    This is kohya's ``N_name`` folder prefix, for zips.
    """
    if not specs:
        return None
    named = [s for s in specs if "=" in s]
    try:
        if not named:
            return [int(s) for s in specs]
        if len(named) != len(specs):
            raise ValueError
        counts = [1] * len(datasets)
        for spec in named:
            name, n = spec.rsplit("=", 1)
            hits = [i for i, d in enumerate(datasets) if name in (d, Path(d).name, Path(d).stem)]
            if not hits:
                raise ValueError(f"--repeats {spec}: no dataset is called {name!r}")
            for i in hits:
                counts[i] = int(n)
        return counts
    except ValueError as exc:
        if str(exc).startswith("--repeats"):
            raise
        raise ValueError(
            f"--repeats takes whole numbers, one per dataset (3 1), or NAME=N (small.zip=3), "
            f"not {' '.join(specs)}"
        ) from None


def build_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lora.train", description=description)
    p.add_argument("datasets", nargs="+", metavar="dataset",
                   help="archive dataset zips (images + metadata.jsonl or .txt captions); "
                        "several train as one")  # fmt: skip
    p.add_argument("-o", "--output-dir", required=True)
    p.add_argument(
        "--base",
        help="SDXL base: Hub id or folder (default $LORA_BASE_MODEL or "
        "stabilityai/stable-diffusion-xl-base-1.0)",
    )
    p.add_argument("--resolution", type=int, default=1024)
    p.add_argument("--buckets", action=argparse.BooleanOptionalAction, default=True,
                   help="aspect-ratio buckets (default); --no-buckets: center crop to a square")
    p.add_argument("--repeats", nargs="+", metavar="N|NAME=N",
                   help="times per epoch per dataset: 3 1, or small.zip=3 (default 1 each)")
    p.add_argument("--caption-dropout", type=float, default=0.0,
                   help="probability of an empty caption for a step (kohya; default 0)")
    p.add_argument("--shuffle-tags", action="store_true",
                   help="shuffle comma-separated caption tags, the trigger's tag kept first")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--alpha", type=float, help="LoRA alpha (default: = rank)")
    p.add_argument("--lr", type=float, default=1e-4)
    steps = p.add_mutually_exclusive_group()
    steps.add_argument("--epochs", type=int, default=500)
    steps.add_argument("--max-steps", type=int)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--mixed-precision", choices=["no", "fp16", "bf16"])
    p.add_argument("--gradient-checkpointing", action="store_true")
    p.add_argument("--cache-latents", action="store_true", help="encode every image once")
    p.add_argument("--train-text-encoder", action="store_true")
    p.add_argument("--snr-gamma", type=float, help="min-SNR weighting, 5 is usual")
    p.add_argument("--validation-prompt")
    p.add_argument("--validation-every", type=int, default=0, help="steps; 0: at the end only")
    p.add_argument("--validation-steps", type=int, default=25, help="inference steps")
    p.add_argument("--checkpoint-every", type=int, default=0, help="steps; 0: end and Ctrl-C")
    p.add_argument("--keep-checkpoints", type=int, default=2)
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
    p.add_argument("--trigger", help="word put in front of every caption")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lr-scheduler", default="constant")
    p.add_argument("--lr-warmup-steps", type=int, default=0)
    return p


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The config of a parsed command line (raises ValueError on bad ``--repeats``)."""
    names = {f.name for f in fields(TrainConfig)}
    values = {k: v for k, v in vars(args).items() if k in names}
    values["repeats"] = parse_repeats(args.repeats, args.datasets)
    return TrainConfig(**values)
