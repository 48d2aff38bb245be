"""Train a style LoRA for SDXL from an archive dataset zip.

    python -m lora.train dataset.zip -o out/imperial \\
        --base stabilityai/stable-diffusion-xl-base-1.0 \\
        --resolution 1024 --rank 8 --max-steps 2000 --mixed-precision fp16 \\
        --gradient-checkpointing --cache-latents --checkpoint-every 250 --trigger imperial

``accelerate launch -m lora.train ...`` spreads it over several GPUs. The steps, in order:

1. read the zip safely, in memory (:mod:`lora.dataset_zip`);
2. load the SDXL parts and put a PEFT LoRA on the UNet attention (``to_q``, ``to_k``,
   ``to_v``, ``to_out.0``), and on both text encoders with ``--train-text-encoder``;
3. print a VRAM and time estimate (T4, A100, this device), with a warning past 16 GB;
4. cache text embeddings (unless the text encoders train) and, with ``--cache-latents``,
   the VAE's latent distributions; both caches live in memory, never on disk;
5. train: center-crop + resize with SDXL's time ids (original size, crop top-left, target),
   epsilon/v-prediction loss, optional min-SNR weighting, tqdm with loss and s/it;
6. checkpoint every N steps (tmp folder, then an atomic rename: a full disk leaves the
   previous checkpoint intact), at the end and on Ctrl-C; ``--resume`` continues
   bit-for-bit (weights, optimizer, LR schedule, RNG states, data order);
7. write ``pytorch_lora_weights.safetensors`` (diffusers), ``lora_kohya.safetensors``
   (kohya keys, see :mod:`lora.kohya`) and a ``README.md`` model card.

Exit codes: 0 done, 2 bad input or missing model, 1 a checkpoint could not be written,
130 stopped by Ctrl-C after saving a checkpoint.
"""

from __future__ import annotations

import argparse
import errno
import io
import json
import logging
import math
import os
import random
import shutil
import signal
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from .dataset_zip import Example, UnsafeZip, ZipDataset, read_dataset_zip
from .models import ModelUnavailable, Resolved, base_from_env, resolve

log = logging.getLogger("borde.lora.train")

LORA_FILE = "pytorch_lora_weights.safetensors"
KOHYA_FILE = "lora_kohya.safetensors"
UNET_TARGETS = ["to_q", "to_k", "to_v", "to_out.0"]
TEXT_TARGETS = ["q_proj", "k_proj", "v_proj", "out_proj"]
# Settings a resumed run must share with the checkpoint, or it is not the same run.
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
)


class CheckpointError(RuntimeError):
    """A checkpoint could not be written; the previous one is untouched."""


@dataclass
class TrainConfig:
    dataset: str
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

    def validated(self) -> TrainConfig:
        if self.resolution < 64 or self.resolution % 8:
            raise ValueError(f"--resolution must be a multiple of 8, >= 64, not {self.resolution}")
        for name in ("rank", "batch_size", "grad_accum", "epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("--max-steps must be at least 1")
        if self.mixed_precision not in (None, "no", "fp16", "bf16"):
            raise ValueError(f"--mixed-precision must be no, fp16 or bf16: {self.mixed_precision}")
        if not Path(self.dataset).is_file():
            raise ValueError(f"dataset zip not found: {self.dataset}")
        return self


# --- models ---------------------------------------------------------------------------------


@dataclass
class Parts:
    tokenizers: list[Any]
    text_encoders: list[Any]
    vae: Any
    unet: Any
    noise_scheduler: Any
    base: Resolved


def load_parts(base: Resolved) -> Parts:
    """The SDXL pieces training needs, all frozen, on the CPU in fp32."""
    from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
    from transformers import AutoTokenizer, CLIPTextModel, CLIPTextModelWithProjection

    kw = {"local_files_only": base.local}
    p = base.path
    parts = Parts(
        tokenizers=[
            AutoTokenizer.from_pretrained(p, subfolder="tokenizer", **kw),
            AutoTokenizer.from_pretrained(p, subfolder="tokenizer_2", **kw),
        ],
        text_encoders=[
            CLIPTextModel.from_pretrained(p, subfolder="text_encoder", **kw),
            CLIPTextModelWithProjection.from_pretrained(p, subfolder="text_encoder_2", **kw),
        ],
        vae=AutoencoderKL.from_pretrained(p, subfolder="vae", **kw),
        unet=UNet2DConditionModel.from_pretrained(p, subfolder="unet", **kw),
        noise_scheduler=DDPMScheduler.from_pretrained(p, subfolder="scheduler", **kw),
        base=base,
    )
    for m in [*parts.text_encoders, parts.vae, parts.unet]:
        m.requires_grad_(False)
    return parts


def add_lora(parts: Parts, cfg: TrainConfig) -> None:
    """PEFT LoRA on the attention projections; lora_B starts at zero, so step 0 = the base."""
    import torch
    from peft import LoraConfig, inject_adapter_in_model

    torch.manual_seed(cfg.seed)
    alpha = cfg.alpha or cfg.rank
    parts.unet.add_adapter(
        LoraConfig(
            r=cfg.rank, lora_alpha=alpha, init_lora_weights="gaussian", target_modules=UNET_TARGETS
        )
    )
    if cfg.train_text_encoder:
        # peft directly: transformers' own add_adapter wants a newer peft than we pin.
        for te in parts.text_encoders:
            inject_adapter_in_model(
                LoraConfig(r=cfg.rank, lora_alpha=alpha, init_lora_weights="gaussian",
                           target_modules=TEXT_TARGETS),
                te,
            )  # fmt: skip


def trainable_models(parts: Parts, cfg: TrainConfig) -> list[Any]:
    return [parts.unet, *(parts.text_encoders if cfg.train_text_encoder else [])]


def encode_prompts(parts: Parts, captions: list[str], device: str) -> tuple[Any, Any]:
    """SDXL conditioning: both encoders' penultimate states side by side, encoder 2's pooled."""
    import torch

    states, pooled = [], None
    for tok, te in zip(parts.tokenizers, parts.text_encoders, strict=True):
        ids = tok(
            captions,
            padding="max_length",
            max_length=tok.model_max_length,
            truncation=True,
            return_tensors="pt",
        ).input_ids
        out = te(ids.to(device), output_hidden_states=True)
        pooled = out[0]  # the projected text embedding for encoder 2
        states.append(out.hidden_states[-2])
    return torch.cat(states, dim=-1), pooled


# --- data -----------------------------------------------------------------------------------


def caption_with_trigger(caption: str, trigger: str | None) -> str:
    if not trigger or trigger.lower() in caption.lower():
        return caption
    return f"{trigger}, {caption}" if caption else trigger


def crop_box(w: int, h: int, resolution: int) -> tuple[int, int, int, int]:
    """(resized w, resized h, top, left): short side to ``resolution``, then a center crop."""
    scale = resolution / min(w, h)
    nw, nh = max(resolution, round(w * scale)), max(resolution, round(h * scale))
    return nw, nh, (nh - resolution) // 2, (nw - resolution) // 2


def time_ids_of(data: bytes, resolution: int) -> list[int]:
    """SDXL's micro-conditioning: original (h, w), crop (top, left), target (h, w)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        w, h = im.size
    _, _, top, left = crop_box(w, h, resolution)
    return [h, w, top, left, resolution, resolution]


def prepare_image(data: bytes, resolution: int) -> Any:
    """Pixels in [-1, 1], 3 x R x R, cropped exactly as :func:`time_ids_of` says."""
    import numpy as np
    import torch
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im = im.convert("RGB")
        nw, nh, top, left = crop_box(*im.size, resolution)
        im = im.resize((nw, nh), Image.Resampling.BICUBIC)
        im = im.crop((left, top, left + resolution, top + resolution))
        arr = np.asarray(im, dtype=np.float32) / 127.5 - 1.0
    return torch.from_numpy(arr).permute(2, 0, 1).contiguous()


def epoch_order(n: int, epoch: int, seed: int) -> list[int]:
    """The shuffle of one epoch depends on (seed, epoch) only, so a resume sees the same order."""
    import torch

    g = torch.Generator().manual_seed(seed * 100_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def micro_batches(
    n: int, batch: int, start: int, seed: int, rank: int = 0, world: int = 1
) -> Iterator[list[int]]:
    """Example indices per micro-batch, from micro-batch ``start`` on, forever."""
    per_epoch = math.ceil(len(range(rank, n, world)) / batch)
    epoch, offset = divmod(start, per_epoch)
    while True:
        mine = epoch_order(n, epoch, seed)[rank::world]
        for i in range(offset, per_epoch):
            yield mine[i * batch : (i + 1) * batch]
        epoch, offset = epoch + 1, 0


# --- checkpoints ----------------------------------------------------------------------------


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
        (tmp / "state.json").write_text(json.dumps({"step": step, "config": asdict(cfg)}, indent=1))
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


# --- outputs --------------------------------------------------------------------------------


def save_lora(out: Path, parts: Parts, cfg: TrainConfig, unwrap: Any) -> Path:
    """The diffusers file (via the pipeline's own saver) and the kohya copy, written atomically."""
    from diffusers import StableDiffusionXLPipeline
    from diffusers.utils import convert_state_dict_to_diffusers
    from peft.utils import get_peft_model_state_dict

    from .kohya import save_kohya

    unet = unwrap(parts.unet)
    layers: dict[str, Any] = {
        "unet_lora_layers": convert_state_dict_to_diffusers(get_peft_model_state_dict(unet)),
        "unet_lora_adapter_metadata": unet.peft_config["default"].to_dict(),
    }
    if cfg.train_text_encoder:
        for name, te in zip(("text_encoder", "text_encoder_2"), parts.text_encoders, strict=True):
            te = unwrap(te)
            layers[f"{name}_lora_layers"] = convert_state_dict_to_diffusers(
                get_peft_model_state_dict(te)
            )
            layers[f"{name}_lora_adapter_metadata"] = te.peft_config["default"].to_dict()
    tmp = out / ".tmp-lora"
    shutil.rmtree(tmp, ignore_errors=True)
    StableDiffusionXLPipeline.save_lora_weights(tmp, **layers)
    save_kohya(
        tmp / LORA_FILE,
        tmp / KOHYA_FILE,
        alpha=cfg.alpha or cfg.rank,
        metadata={
            "ss_network_module": "networks.lora",
            "ss_network_dim": str(cfg.rank),
            "ss_network_alpha": str(cfg.alpha or cfg.rank),
            "ss_base_model_version": "sdxl_base_v1-0",
            "ss_sd_model_name": str(cfg.base),
            "ss_resolution": str(cfg.resolution),
        },
    )
    for name in (LORA_FILE, KOHYA_FILE):
        os.replace(tmp / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)
    return out / LORA_FILE


def write_model_card(
    out: Path, cfg: TrainConfig, data: ZipDataset, steps: int, final_loss: float | None
) -> Path:
    captions = [e.caption for e in data.examples[:3]]
    trigger = cfg.trigger or "(none: the captions themselves carry the style)"
    settings = {k: v for k, v in asdict(cfg).items() if k not in ("dataset", "output_dir")}
    card = f"""---
base_model: {cfg.base}
library_name: diffusers
tags: [stable-diffusion-xl, lora, text-to-image, borde]
---
# Style LoRA for SDXL

Trained with `python -m lora.train` (Borde) on `{Path(cfg.dataset).name}`.

- **Trigger word:** {trigger}
- **Base model:** `{cfg.base}`
- **Steps trained:** {steps}; final loss {final_loss if final_loss is None else f"{final_loss:.4f}"}
- **Dataset:** {data.summary()}
- **Example captions:** {"; ".join(repr(c) for c in captions)}

## Files
- `{LORA_FILE}`: diffusers format, `pipe.load_lora_weights("{out.name}")`.
- `{KOHYA_FILE}`: kohya format for ComfyUI / AUTOMATIC1111. Keys are the diffusers module
  paths with dots as underscores, e.g.
  `lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q.lora_down.weight`,
  `.lora_up.weight` and `.alpha` (= {cfg.alpha or cfg.rank}); text encoders use `lora_te1_`
  / `lora_te2_`.

## Use
```python
import lora
image = lora.generate("{caption_with_trigger("a cyber-monocle", cfg.trigger)}",
                      base="{cfg.base}", lora="{out}", lora_scale=0.8)
```
or `python -m lora.generate "PROMPT" -o out.png --base BASE --lora {out}`.

## Settings
```json
{json.dumps(settings, indent=1)}
```
"""
    path = out / "README.md"
    path.write_text(card, encoding="utf-8")
    return path


def validate(
    parts: Parts,
    cfg: TrainConfig,
    step: int,
    device: str,
    weight_dtype: Any,
    unwrap: Any,
    out: Path,
) -> Path:
    """One image with the LoRA as it is now; the training RNG streams are left untouched."""
    import torch
    from diffusers import StableDiffusionXLPipeline

    unet = unwrap(parts.unet)
    tes = [unwrap(te) for te in parts.text_encoders]
    here = torch.device(device).type
    moved = [m for m in [*tes, parts.vae] if m.device.type != here]
    for m in moved:
        m.to(device)
    pipe = StableDiffusionXLPipeline.from_pretrained(
        parts.base.path,
        unet=unet,
        vae=parts.vae,
        text_encoder=tes[0],
        text_encoder_2=tes[1],
        tokenizer=parts.tokenizers[0],
        tokenizer_2=parts.tokenizers[1],
        local_files_only=parts.base.local,
    )
    pipe.set_progress_bar_config(disable=True)
    unet.eval()
    devices = [torch.cuda.current_device()] if device.startswith("cuda") else []
    with (
        torch.random.fork_rng(devices=devices),
        torch.no_grad(),
        torch.autocast(
            device_type="cuda" if device.startswith("cuda") else "cpu",
            dtype=weight_dtype,
            enabled=device.startswith("cuda") and weight_dtype != torch.float32,
        ),
    ):
        image = pipe(
            caption_with_trigger(cfg.validation_prompt or "", cfg.trigger),
            num_inference_steps=cfg.validation_steps,
            height=cfg.resolution,
            width=cfg.resolution,
            generator=torch.Generator("cpu").manual_seed(cfg.seed),
        ).images[0]
    unet.train()
    for m in moved:
        m.to("cpu")
    del pipe
    path = out / "validation" / f"step-{step:06d}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path


# --- the loop -------------------------------------------------------------------------------


@dataclass
class Result:
    output_dir: Path
    steps: int
    final_loss: float | None
    interrupted: bool
    lora_file: Path | None
    loop_seconds: float = 0.0  # the training loop alone: no loading, caching or saving
    steps_run: int = 0  # steps done by this call (not counting resumed ones)
    peak_vram_mb: float | None = None  # during the training loop, on CUDA


def train_lora(cfg: TrainConfig) -> Result:
    """Train (or resume) and write the LoRA, the kohya copy and the model card."""
    cfg = cfg.validated()
    cfg.base = cfg.base or base_from_env()
    base = resolve(cfg.base)
    data = read_dataset_zip(cfg.dataset)  # UnsafeZip before anything heavy is loaded
    out = Path(cfg.output_dir)
    ckpts = checkpoint_dirs(out)
    if cfg.resume:
        if not ckpts:
            raise ValueError(f"--resume: no checkpoint in {out / 'checkpoints'}")
        saved_cfg = json.loads((ckpts[-1] / "state.json").read_text())["config"]
        diff = [k for k in MUST_MATCH if saved_cfg.get(k) != asdict(cfg).get(k)]
        if diff:
            raise ValueError(f"--resume: {', '.join(diff)} differ from {ckpts[-1]}")

    # Heavy imports only now: bad input and missing models fail in under a second.
    import torch
    import torch.nn.functional as F
    from accelerate import Accelerator
    from diffusers.optimization import get_scheduler
    from diffusers.training_utils import cast_training_params, compute_snr
    from tqdm.auto import tqdm

    from . import estimate

    mp = cfg.mixed_precision or ("fp16" if torch.cuda.is_available() else "no")
    if mp == "fp16" and not torch.cuda.is_available():
        log.warning("fp16 mixed precision needs a GPU; training in fp32 on the CPU")
        mp = "no"
    cfg.mixed_precision = mp
    accelerator = Accelerator(mixed_precision=mp, gradient_accumulation_steps=cfg.grad_accum)
    device = str(accelerator.device)
    weight_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mp, torch.float32)
    main = accelerator.is_main_process
    out.mkdir(parents=True, exist_ok=True)

    parts = load_parts(base)
    add_lora(parts, cfg)
    models = trainable_models(parts, cfg)
    for m in [parts.unet, *parts.text_encoders]:
        m.to(device) if weight_dtype == torch.float32 else m.to(device, dtype=weight_dtype)
    parts.vae.to(device)  # fp32: SDXL's own VAE overflows in fp16
    if weight_dtype != torch.float32:
        cast_training_params(models, dtype=torch.float32)  # LoRA weights train in fp32
    if cfg.gradient_checkpointing:
        parts.unet.enable_gradient_checkpointing()
        if cfg.train_text_encoder:
            for te in parts.text_encoders:
                enable = getattr(te, "activation_checkpointing_enable", None)
                (enable or te.gradient_checkpointing_enable)()

    params = [p for m in models for p in m.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=1e-2)
    n_local = len(range(accelerator.process_index, len(data.examples), accelerator.num_processes))
    mb_per_epoch = math.ceil(n_local / cfg.batch_size)
    total = cfg.max_steps or cfg.epochs * math.ceil(mb_per_epoch / cfg.grad_accum)
    lr_scheduler = get_scheduler(
        cfg.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=cfg.lr_warmup_steps * accelerator.num_processes,
        num_training_steps=total * accelerator.num_processes,
    )
    prepared = accelerator.prepare(*models, optimizer, lr_scheduler)
    models, optimizer, lr_scheduler = list(prepared[: len(models)]), prepared[-2], prepared[-1]
    parts.unet = models[0]
    if cfg.train_text_encoder:
        parts.text_encoders = models[1:]
    noise_gen = torch.Generator().manual_seed(cfg.seed + accelerator.process_index)

    start = 0
    if cfg.resume:
        start = load_checkpoint(
            ckpts[-1],
            [accelerator.unwrap_model(m) for m in models],
            optimizer,
            lr_scheduler,
            noise_gen,
            accelerator.scaler,
        )
        print(f"resuming from {ckpts[-1]} at step {start}")
    if start >= total:
        print(f"already at step {start} of {total}; nothing to train")

    if main:
        name = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
        print(data.summary())
        print(
            estimate.report(
                estimate.Settings(
                    resolution=cfg.resolution,
                    batch_size=cfg.batch_size,
                    mixed_precision=mp,
                    gradient_checkpointing=cfg.gradient_checkpointing,
                    cache_latents=cfg.cache_latents,
                    train_text_encoder=cfg.train_text_encoder,
                    unet_params=sum(p.numel() for p in parts.unet.parameters()),
                    text_encoder_params=sum(
                        p.numel() for te in parts.text_encoders for p in te.parameters()
                    ),
                    vae_params=sum(p.numel() for p in parts.vae.parameters()),
                    lora_params=sum(p.numel() for p in params),
                    steps=max(total - start, 0),
                ),
                device,
                name,
            )
        )

    examples: list[Example] = data.examples
    captions = [caption_with_trigger(e.caption, cfg.trigger) for e in examples]
    time_ids = [time_ids_of(e.data, cfg.resolution) for e in examples]

    # Caches, in memory: text embeddings per caption, latent distributions per image.
    text_cache: dict[str, tuple[Any, Any]] = {}
    if not cfg.train_text_encoder:
        with torch.no_grad():
            for cap in sorted(set(captions)):
                emb, pooled = encode_prompts(parts, [cap], device)
                text_cache[cap] = (emb[0].float().cpu(), pooled[0].float().cpu())
        for te in parts.text_encoders:  # kept on the CPU for validation images only
            te.to("cpu")
    latent_cache: dict[int, Any] = {}

    def latent_params(i: int) -> Any:
        if i in latent_cache:
            return latent_cache[i]
        pixels = prepare_image(examples[i].data, cfg.resolution).unsqueeze(0).to(device)
        with torch.no_grad():
            p = parts.vae.encode(pixels).latent_dist.parameters[0].cpu()
        if cfg.cache_latents:
            latent_cache[i] = p
        return p

    if cfg.cache_latents:
        for i in tqdm(range(len(examples)), desc="caching latents", disable=not main):
            latent_params(i)
        parts.vae.to("cpu")  # only the decoder is needed again, for validation images

    scaling = parts.vae.config.scaling_factor
    sched = parts.noise_scheduler
    pred_type = sched.config.prediction_type
    batches = micro_batches(
        len(examples),
        cfg.batch_size,
        start * cfg.grad_accum,
        cfg.seed,
        accelerator.process_index,
        accelerator.num_processes,
    )
    bar = tqdm(total=total, initial=start, unit="step", desc="training", disable=not main)
    step, loss_value, interrupted = start, None, False
    for m in models:
        m.train()

    def checkpoint() -> None:
        accelerator.wait_for_everyone()
        if main:
            unwrapped = [accelerator.unwrap_model(m) for m in models]
            save_checkpoint(
                out, step, unwrapped, optimizer, lr_scheduler, noise_gen, cfg, accelerator.scaler
            )

    on_cuda = device.startswith("cuda")
    if on_cuda:
        torch.cuda.reset_peak_memory_stats()
    with StopFlag() as flag:
        t_last = t_loop = time.perf_counter()
        while step < total:
            idx = next(batches)
            with accelerator.accumulate(*models):
                dist = torch.stack([latent_params(i) for i in idx])
                mean, logvar = dist.chunk(2, dim=1)
                std = torch.exp(0.5 * logvar.clamp(-30.0, 20.0))
                sample = mean + std * torch.randn(mean.shape, generator=noise_gen)
                latents = (sample * scaling).to(device, weight_dtype)
                noise = torch.randn(latents.shape, generator=noise_gen).to(device, weight_dtype)
                t = torch.randint(
                    0, sched.config.num_train_timesteps, (len(idx),), generator=noise_gen
                ).to(device)
                noisy = sched.add_noise(latents, noise, t)
                caps = [captions[i] for i in idx]
                if cfg.train_text_encoder:
                    emb, pooled = encode_prompts(parts, caps, device)
                else:
                    emb = torch.stack([text_cache[c][0] for c in caps])
                    pooled = torch.stack([text_cache[c][1] for c in caps])
                add_time = torch.tensor([time_ids[i] for i in idx], dtype=torch.float32)
                with accelerator.autocast():
                    pred = parts.unet(
                        noisy,
                        t,
                        emb.to(device, weight_dtype),
                        added_cond_kwargs={
                            "text_embeds": pooled.to(device, weight_dtype),
                            "time_ids": add_time.to(device, weight_dtype),
                        },
                    ).sample
                target = noise if pred_type == "epsilon" else sched.get_velocity(latents, noise, t)
                if cfg.snr_gamma:
                    snr = compute_snr(sched, t)
                    w = torch.stack([snr, cfg.snr_gamma * torch.ones_like(snr)], 1).min(1)[0]
                    w = w / snr if pred_type == "epsilon" else w / (snr + 1)
                    loss = F.mse_loss(pred.float(), target.float(), reduction="none")
                    loss = (loss.mean(dim=(1, 2, 3)) * w).mean()
                else:
                    loss = F.mse_loss(pred.float(), target.float())
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(params, cfg.max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad(set_to_none=True)
            if not accelerator.sync_gradients:
                continue
            step += 1
            loss_value = float(loss.detach())
            now = time.perf_counter()
            bar.set_postfix(loss=f"{loss_value:.4f}", s_it=f"{now - t_last:.2f}")
            bar.update(1)
            t_last = now
            if cfg.checkpoint_every and step % cfg.checkpoint_every == 0 and step < total:
                checkpoint()
            if (
                cfg.validation_prompt
                and cfg.validation_every
                and main
                and step % cfg.validation_every == 0
                and step < total
            ):
                validate(parts, cfg, step, device, weight_dtype, accelerator.unwrap_model, out)
            if flag.stop:
                interrupted = True
                break
    bar.close()
    loop_s = time.perf_counter() - t_loop
    peak = torch.cuda.max_memory_allocated() / 2**20 if on_cuda else None
    if peak and main:
        print(f"peak VRAM during training: {peak:.0f} MB")
    checkpoint()
    if interrupted:
        print(f"stopped at step {step}; checkpoint saved, continue with --resume")
        return Result(out, step, loss_value, True, None, loop_s, step - start, peak)

    lora_file = None
    if main:
        lora_file = save_lora(out, parts, cfg, accelerator.unwrap_model)
        if cfg.validation_prompt:
            validate(parts, cfg, step, device, weight_dtype, accelerator.unwrap_model, out)
        write_model_card(out, cfg, data, step, loss_value)
        (out / "train_config.json").write_text(json.dumps(asdict(cfg), indent=1))
        print(f"wrote {lora_file}, {out / KOHYA_FILE} and {out / 'README.md'}")
    accelerator.end_training()
    return Result(out, step, loss_value, False, lora_file, loop_s, step - start, peak)


# --- CLI ------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lora.train", description=__doc__.split("\n")[0])
    p.add_argument("dataset", help="archive dataset zip (images/*.jpg + captions)")
    p.add_argument("-o", "--output-dir", required=True)
    p.add_argument(
        "--base",
        help="SDXL base: Hub id or folder (default $LORA_BASE_MODEL or "
        "stabilityai/stable-diffusion-xl-base-1.0)",
    )
    p.add_argument("--resolution", type=int, default=1024)
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = {f.name for f in fields(TrainConfig)}
    cfg = TrainConfig(**{k: v for k, v in vars(args).items() if k in names})
    try:
        result = train_lora(cfg)
    except (ModelUnavailable, UnsafeZip, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped without a new checkpoint (second Ctrl-C)", file=sys.stderr)
        return 130
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
