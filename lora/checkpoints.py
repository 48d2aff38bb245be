"""Checkpoints: save, load and resume a run bit for bit, and survive a full disk.

A checkpoint is the LoRA weights, the optimizer, the LR schedule, the RNG states (the
noise generator's, torch's, numpy's, Python's, CUDA's) and the fp16 loss scale. It is
written to a tmp folder and renamed, so one on disk is always whole: a full disk leaves
the previous one intact and says so (:class:`CheckpointError`). The data order needs no
state: it depends on (seed, epoch) only (:mod:`lora.train_data`).
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from .train_config import TrainConfig, resume_mismatch


class CheckpointError(RuntimeError):
    """A checkpoint could not be written; the previous one is untouched."""


def checkpoint_dirs(out: Path) -> list[Path]:
    root = out / "checkpoints"
    found = [p for p in root.glob("checkpoint-*") if p.is_dir() and p.name[11:].isdigit()]
    return sorted(found, key=lambda p: int(p.name[11:]))


def trainable_state(models: list[Any]) -> dict[str, Any]:
    return {
        f"{i}.{name}": p.detach().to("cpu", copy=True).contiguous()
        for i, m in enumerate(models)
        for name, p in m.named_parameters()
        if p.requires_grad
    }


def rng_state(noise_gen: Any) -> dict[str, Any]:
    import numpy as np
    import torch

    state = {
        "noise": noise_gen.get_state(),
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any], noise_gen: Any) -> None:
    import numpy as np
    import torch

    noise_gen.set_state(state["noise"])
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(
    out: Path,
    step: int,
    models: list[Any],
    optimizer: Any,
    scheduler: Any,
    noise_gen: Any,
    cfg: TrainConfig,
    scaler: Any = None,
) -> Path:
    """Write to a tmp folder, then rename: a checkpoint on disk is always whole."""
    import torch
    from safetensors.torch import save_file

    root = out / "checkpoints"
    final = root / f"checkpoint-{step:06d}"
    tmp = root / f".tmp-checkpoint-{step:06d}"
    previous = checkpoint_dirs(out)
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        save_file(trainable_state(models), str(tmp / "lora_params.safetensors"))
        torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
        torch.save(scheduler.state_dict(), tmp / "lr_scheduler.pt")
        torch.save(rng_state(noise_gen), tmp / "rng.pt")
        if scaler is not None:  # fp16: the loss scale is part of the state too
            torch.save(scaler.state_dict(), tmp / "grad_scaler.pt")
        state = {"step": step, "config": cfg.record()}
        (tmp / "state.json").write_text(json.dumps(state, indent=1))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except (OSError, RuntimeError) as exc:
        # torch.save reports a full disk as a RuntimeError from its C++ zip writer
        # ("iostream error", "unexpected pos"); any other RuntimeError is a bug.
        if isinstance(exc, RuntimeError) and not _nearly_full(root):
            raise
        shutil.rmtree(tmp, ignore_errors=True)
        full = getattr(exc, "errno", None) == errno.ENOSPC or _nearly_full(root)
        why = "the disk is full" if full else (getattr(exc, "strerror", None) or str(exc))
        kept = f"{previous[-1]} is intact" if previous else "there is no earlier checkpoint"
        raise CheckpointError(
            f"could not write the checkpoint at step {step} ({why}); {kept}. "
            "Free some space and run again with --resume."
        ) from exc
    for old in checkpoint_dirs(out)[: -max(cfg.keep_checkpoints, 1)]:
        shutil.rmtree(old, ignore_errors=True)
    return final


def _nearly_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 8 * 2**20
    except OSError:
        return False


def load_checkpoint(
    path: Path,
    models: list[Any],
    optimizer: Any,
    scheduler: Any,
    noise_gen: Any,
    scaler: Any = None,
) -> int:
    import torch
    from safetensors.torch import load_file

    saved = load_file(str(path / "lora_params.safetensors"))
    current = {
        f"{i}.{name}": p
        for i, m in enumerate(models)
        for name, p in m.named_parameters()
        if p.requires_grad
    }
    if saved.keys() != current.keys():
        raise ValueError(f"{path} was trained with other LoRA layers; cannot resume from it")
    with torch.no_grad():
        for key, p in current.items():
            p.copy_(saved[key])
    optimizer.load_state_dict(torch.load(path / "optimizer.pt", weights_only=False))
    scheduler.load_state_dict(torch.load(path / "lr_scheduler.pt", weights_only=False))
    set_rng_state(torch.load(path / "rng.pt", weights_only=False), noise_gen)
    if scaler is not None and (path / "grad_scaler.pt").is_file():
        scaler.load_state_dict(torch.load(path / "grad_scaler.pt", weights_only=False))
    return json.loads((path / "state.json").read_text())["step"]


class StopFlag:
    """First Ctrl-C: finish the step, checkpoint, exit. Second: stop at once."""

    def __init__(self) -> None:
        self.stop = False
        self._previous: Any = None

    def __enter__(self) -> StopFlag:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.stop:
            raise KeyboardInterrupt
        self.stop = True
        print(
            "\nCtrl-C: saving a checkpoint after this step (Ctrl-C again to quit now)",
            file=sys.stderr,
        )

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def resume_point(cfg: TrainConfig) -> Path | None:
    """The checkpoint ``--resume`` continues from (None without ``--resume``).

    Raises ValueError when there is none, or when it was another run's."""
    if not cfg.resume:
        return None
    out = Path(cfg.output_dir)
    ckpts = checkpoint_dirs(out)
    if not ckpts:
        raise ValueError(f"--resume: no checkpoint in {out / 'checkpoints'}")
    saved = json.loads((ckpts[-1] / "state.json").read_text())["config"]
    diff = resume_mismatch(saved, cfg)
    if diff:
        raise ValueError(f"--resume: {', '.join(diff)} differ from {ckpts[-1]}")
    return ckpts[-1]
