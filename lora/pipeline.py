"""SDXL + style LoRA generation, one request at a time.

Read it like a diffusers pipeline: options -> models resolved -> pipeline
loaded for this request through the on-demand holder (released afterwards by
default) -> image with its settings embedded in the PNG, so any image can be
reproduced from the file alone.

On a GPU: fp16 (or bf16) weights, SDPA attention, the fp16-fix VAE in fp16 and
the style LoRA fused into the UNet. ``few_step`` stacks the LCM-LoRA with the
style LoRA through ``set_adapters`` and an LCM scheduler for 4-8 steps: it is
also what a GPU failure (OOM, spent quota, no GPU) falls back to on the CPU.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from ondemand import OnDemand, pick_device, with_cpu_fallback

from .models import (
    DEFAULT_LCM_LORA,
    DEFAULT_VAE_FP16,
    ENV_FEW_STEP,
    ENV_LORA,
    ENV_VAE,
    ModelUnavailable,
    Resolved,
    base_from_env,
    lora_from_env,
    resolve,
)

log = logging.getLogger("borde.lora")

FULL_STEPS, FULL_GUIDANCE = 30, 7.0
FEW_STEPS, FEW_GUIDANCE = 6, 1.0  # LCM wants guidance 1-2; 1.0 also skips the uncond pass
FEW_STEP_RANGE = (2, 8)
MAX_SEED = 2**32 - 1


@dataclass(frozen=True)
class GenerateOptions:
    """Everything that decides an image; stored in the PNG as is."""

    prompt: str
    negative: str = ""
    base: str | None = None  # Hub id or folder; None: $LORA_BASE_MODEL, then SDXL base 1.0
    lora: str | None = None  # Hub id, folder or .safetensors; None: $LORA_WEIGHTS
    lora_scale: float = 0.8
    steps: int | None = None  # None: 30, or 6 with few_step
    guidance: float | None = None  # None: 7.0, or 1.0 with few_step
    size: int = 1024
    seed: int | None = None  # None: a random seed, recorded in the PNG
    few_step: bool = False
    few_step_lora: str | None = None  # None: $LORA_FEW_STEP_LORA, then latent-consistency's
    vae: str | None = None  # fp16 VAE for the GPU; None: $LORA_VAE, then the fp16-fix VAE
    device: str | None = None  # None: CUDA when present, else CPU
    dtype: str | None = None  # fp16 | bf16 | fp32; None: fp16 on CUDA, fp32 on CPU
    policy: str = "release"

    def validated(self) -> GenerateOptions:
        """Defaults filled in and bad input refused (ValueError) before any model loads."""
        import os

        if not self.prompt or not self.prompt.strip():
            raise ValueError("the prompt is empty")
        if self.size < 64 or self.size % 8:
            raise ValueError(f"size must be a multiple of 8 and at least 64, not {self.size}")
        if self.dtype not in (None, "fp16", "bf16", "fp32"):
            raise ValueError(f"dtype must be fp16, bf16 or fp32, not {self.dtype!r}")
        steps = self.steps or (FEW_STEPS if self.few_step else FULL_STEPS)
        if steps < 1:
            raise ValueError(f"steps must be at least 1, not {steps}")
        if self.few_step and not FEW_STEP_RANGE[0] <= steps <= FEW_STEP_RANGE[1]:
            clamped = min(max(steps, FEW_STEP_RANGE[0]), FEW_STEP_RANGE[1])
            log.warning("few-step mode runs %d-%d steps; using %d", *FEW_STEP_RANGE, clamped)
            steps = clamped
        guidance = self.guidance
        if guidance is None:
            guidance = FEW_GUIDANCE if self.few_step else FULL_GUIDANCE
        seed = random.randint(0, MAX_SEED) if self.seed is None else int(self.seed)
        if not 0 <= seed <= MAX_SEED:
            raise ValueError(f"seed must be between 0 and {MAX_SEED}, not {seed}")
        return replace(
            self,
            base=self.base or base_from_env(),
            lora=self.lora if self.lora is not None else lora_from_env(),
            steps=steps,
            guidance=float(guidance),
            seed=seed,
            few_step_lora=(self.few_step_lora or os.environ.get(ENV_FEW_STEP) or DEFAULT_LCM_LORA),
            vae=self.vae or os.environ.get(ENV_VAE) or DEFAULT_VAE_FP16,
        )


def resolve_models(opts: GenerateOptions) -> dict[str, Resolved]:
    """Every model this request needs, resolved up front so a missing one fails fast."""
    found = {"base": resolve(opts.base or base_from_env())}
    if opts.lora:
        found["lora"] = resolve(opts.lora, "LoRA", "--lora", ENV_LORA)
    if opts.few_step:
        found["few_step_lora"] = resolve(
            opts.few_step_lora or DEFAULT_LCM_LORA, "few-step LoRA", "--few-step-lora", ENV_FEW_STEP
        )
    return found


def torch_dtype(device: str, name: str | None) -> Any:
    import torch

    if name is None:
        name = "fp16" if device.startswith("cuda") else "fp32"
    return {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[name]


def load_pipeline(opts: GenerateOptions, device: str) -> Any:
    """The SDXL pipeline for one request, on ``device``, with the LoRA(s) applied."""
    import torch
    from diffusers import AutoencoderKL, LCMScheduler, StableDiffusionXLPipeline
    from diffusers.models.attention_processor import AttnProcessor2_0

    models = resolve_models(opts)
    dtype = torch_dtype(device, opts.dtype)
    base = models["base"]
    kwargs: dict[str, Any] = {"dtype": dtype, "local_files_only": base.local}
    if dtype == torch.float16 and opts.vae:
        # SDXL's own VAE overflows in fp16 (black images); the fp16-fix VAE does not.
        try:
            vae_ref = resolve(opts.vae, "fp16-fix VAE", "--vae", ENV_VAE)
            kwargs["vae"] = AutoencoderKL.from_pretrained(
                vae_ref.path, dtype=dtype, local_files_only=vae_ref.local
            )
        except ModelUnavailable as exc:
            log.warning("%s; keeping the base VAE (upcast to fp32 while decoding)", exc)
    pipe = StableDiffusionXLPipeline.from_pretrained(base.path, **kwargs)
    pipe.unet.set_attn_processor(AttnProcessor2_0())  # SDPA: flash/mem-efficient kernels
    pipe.to(device)

    if opts.few_step:
        fast = models["few_step_lora"]
        pipe.load_lora_weights(fast.path, adapter_name="fast", local_files_only=fast.local)
        names, weights = ["fast"], [1.0]
        if "lora" in models:
            style = models["lora"]
            pipe.load_lora_weights(style.path, adapter_name="style", local_files_only=style.local)
            names.append("style")
            weights.append(opts.lora_scale)
        pipe.set_adapters(names, adapter_weights=weights)
        pipe.scheduler = LCMScheduler.from_config(pipe.scheduler.config)
    elif "lora" in models:
        style = models["lora"]
        pipe.load_lora_weights(style.path, adapter_name="style", local_files_only=style.local)
        # Fused: the LoRA costs nothing per step; unloading drops the now-empty adapter layers.
        pipe.fuse_lora(lora_scale=opts.lora_scale, adapter_names=["style"])
        pipe.unload_lora_weights()
    return pipe


_holders: dict[tuple, OnDemand] = {}
_holders_lock = threading.Lock()


def holder_for(opts: GenerateOptions) -> OnDemand:
    """One holder per distinct pipeline, so ``offload``/``keep`` policies share a copy."""
    key = (
        opts.base,
        opts.lora,
        opts.lora_scale,
        opts.few_step,
        opts.few_step_lora,
        opts.vae,
        opts.dtype,
        opts.policy,
    )
    with _holders_lock:
        if key not in _holders:
            _holders[key] = OnDemand(
                lambda device: load_pipeline(opts, device), policy=opts.policy, name="sdxl"
            )
        return _holders[key]


def settings_of(opts: GenerateOptions, device: str) -> dict[str, Any]:
    """What goes into the PNG: enough to make the same image again."""
    s = asdict(opts)
    s["negative_prompt"] = s.pop("negative")
    s["width"] = s["height"] = s.pop("size")
    if not opts.lora:
        s["lora_scale"] = None
    if not opts.few_step:
        s["few_step_lora"] = None
    for key in ("policy", "device"):
        s.pop(key)
    s["device"] = device
    s["dtype"] = opts.dtype or ("fp16" if device.startswith("cuda") else "fp32")
    s["scheduler"] = "LCMScheduler" if opts.few_step else "EulerDiscreteScheduler (base default)"
    s["generator"] = "torch.Generator('cpu').manual_seed(seed)"
    return s


def _run(opts: GenerateOptions, device: str) -> tuple[Any, dict[str, Any]]:
    import torch

    with holder_for(opts).use(device) as pipe:
        result = pipe(
            prompt=opts.prompt,
            negative_prompt=opts.negative or None,
            num_inference_steps=opts.steps,
            guidance_scale=opts.guidance,
            width=opts.size,
            height=opts.size,
            # A CPU generator gives the same noise on every device.
            generator=torch.Generator("cpu").manual_seed(opts.seed),
        )
        image = result.images[0]
    settings = settings_of(opts, device)
    attach_settings(image, settings)
    return image, settings


def cpu_fallback_options(opts: GenerateOptions) -> GenerateOptions:
    """Few steps with the LCM-LoRA when we have it; the same settings otherwise."""
    if opts.few_step:
        return replace(opts, device="cpu")
    try:
        resolve(opts.few_step_lora or DEFAULT_LCM_LORA, "few-step LoRA", "--few-step-lora", None)
    except ModelUnavailable:
        return replace(opts, device="cpu")
    return replace(opts, device="cpu", few_step=True, steps=FEW_STEPS, guidance=FEW_GUIDANCE)


def generate_with_settings(prompt: str, **opts: Any) -> tuple[Any, dict[str, Any]]:
    """Like :func:`generate`, and also returns the settings that made the image."""
    o = GenerateOptions(prompt=prompt, **opts).validated()
    resolve_models(o)  # ModelUnavailable now, not halfway through a GPU slot
    device = pick_device(o.device)
    if device == "cpu":
        return _run(o, "cpu")
    cpu = cpu_fallback_options(o)
    return with_cpu_fallback(
        lambda: _run(o, device), lambda: _run(cpu, "cpu"), what="SDXL generation"
    )


def generate(prompt: str, **opts: Any) -> Any:
    """One image (PIL) for ``prompt``; see :class:`GenerateOptions` for the options.

    The settings ride along in ``image.info`` so :func:`save_png` embeds them.
    """
    return generate_with_settings(prompt, **opts)[0]


# --- PNG metadata ---------------------------------------------------------------------------

SETTINGS_KEY = "borde"


def a1111_parameters(s: dict[str, Any]) -> str:
    """The ``parameters`` text other tools (A1111, Civitai) already read."""
    lines = [s["prompt"]]
    if s.get("negative_prompt"):
        lines.append(f"Negative prompt: {s['negative_prompt']}")
    tail = (
        f"Steps: {s['steps']}, CFG scale: {s['guidance']}, Seed: {s['seed']}, "
        f"Size: {s['width']}x{s['height']}, Model: {s['base']}"
    )
    if s.get("lora"):
        tail += f", Lora: {s['lora']}, Lora scale: {s['lora_scale']}"
    if s.get("few_step"):
        tail += f", Few-step LoRA: {s['few_step_lora']}"
    return "\n".join(lines + [tail])


def attach_settings(image: Any, settings: dict[str, Any]) -> None:
    image.info[SETTINGS_KEY] = json.dumps(settings, sort_keys=True)
    image.info["parameters"] = a1111_parameters(settings)


def save_png(image: Any, path: str | Path, settings: dict[str, Any] | None = None) -> Path:
    """Write a PNG whose text chunks hold every setting (JSON under ``borde``, one per key)."""
    from PIL.PngImagePlugin import PngInfo

    if settings is None:
        settings = json.loads(image.info.get(SETTINGS_KEY, "{}"))
    info = PngInfo()
    info.add_text(SETTINGS_KEY, json.dumps(settings, sort_keys=True))
    info.add_text("parameters", a1111_parameters(settings) if settings else "")
    for key, value in settings.items():
        info.add_text(key, "" if value is None else str(value))
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out, format="PNG", pnginfo=info)
    return out


def read_settings(path: str | Path) -> dict[str, Any]:
    """The settings embedded by :func:`save_png`; ``{}`` for any other PNG."""
    from PIL import Image

    with Image.open(path) as im:
        im.load()
        raw = im.text.get(SETTINGS_KEY) if hasattr(im, "text") else None
    return json.loads(raw) if raw else {}


def options_from_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments for :func:`generate` that remake an image from its settings."""
    return {
        "negative": settings.get("negative_prompt") or "",
        "base": settings.get("base"),
        "lora": settings.get("lora") or "",
        "lora_scale": settings.get("lora_scale") or 0.8,
        "steps": settings.get("steps"),
        "guidance": settings.get("guidance"),
        "size": settings.get("width"),
        "seed": settings.get("seed"),
        "few_step": bool(settings.get("few_step")),
        "few_step_lora": settings.get("few_step_lora"),
        "dtype": settings.get("dtype"),
    }
