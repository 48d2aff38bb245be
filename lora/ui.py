"""What the LoRA tab calls. No gradio here: app.py owns the widgets, this owns the work.

``generate_for_ui`` and ``gpu_duration`` take the same arguments in the same order, so
app.py can write ``@gpu(duration=gpu_duration)`` on a handler with that signature.
Errors are raised, not swallowed: :class:`~lora.models.ModelUnavailable` (the base or
LoRA is missing; the message says how to fix it) and ``ValueError`` (bad input); the app
shows their text as is.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from ondemand import last_fallback

from .models import (
    DEFAULT_BASE,
    ENV_BASE,
    ENV_LORA,
    base_from_env,
    describe,
    lora_from_env,
)
from .pipeline import FEW_STEP_RANGE, MAX_SEED, generate_with_settings

EXAMPLE_PROMPTS = [
    "a cyber-monocle in the style of an 1890 engraving",
    "a steam-powered airship over a harbour, fine cross-hatching, 1890 engraving",
    "portrait of a lighthouse keeper with a brass prosthetic arm, etched plate",
    "an anatomical plate of a mechanical beetle, copperplate engraving",
    "a city street at night lit by arc lamps, wood engraving from an illustrated weekly",
]
DEFAULT_NEGATIVE = "photo, colour, blurry, low quality, watermark, text"
SIZES = [512, 768, 1024]

# Seconds per 1024-px step for a ZeroGPU slice (fp16, with CFG), and the fixed cost of
# loading SDXL, fusing the LoRA and decoding; measured figures replace these when known.
_STEP_S_1024 = 0.15
_FIXED_S = 25.0


def random_seed() -> int:
    """For the dice button."""
    return random.randint(0, MAX_SEED)


def gpu_duration(
    prompt: str,
    negative: str,
    lora_scale: float,
    steps: int,
    guidance: float,
    seed: int | None,
    size: int,
    few_step: bool,
    base: str | None = None,
    lora: str | None = None,
) -> int:
    """Seconds to ask ``@spaces.GPU`` for: load + steps x per-step cost, with 50 % margin."""
    steps = int(steps or 30)
    if few_step:
        steps = min(max(steps, FEW_STEP_RANGE[0]), FEW_STEP_RANGE[1])
    per_step = _STEP_S_1024 * (int(size or 1024) / 1024) ** 2
    if few_step or (guidance is not None and float(guidance) <= 1.0):
        per_step /= 2  # no unconditional pass
    return int(min(max((_FIXED_S + steps * per_step) * 1.5, 20), 300))


def settings_caption(settings: dict[str, Any], seconds: float | None = None) -> str:
    """One line under each gallery image: enough to make it again."""
    lora = settings.get("lora")
    parts = [
        f"seed {settings['seed']}",
        f"{settings['steps']} steps",
        f"guidance {settings['guidance']:g}",
        f"{settings['width']}x{settings['height']}",
        f"LoRA {Path(lora).name or lora} @ {settings['lora_scale']:g}" if lora else "no LoRA",
    ]
    if settings.get("few_step"):
        parts.append("few-step (LCM)")
    parts.append(settings.get("device", "?"))
    if seconds is not None:
        parts.append(f"{seconds:.1f} s")
    return " · ".join(parts)


def generate_for_ui(
    prompt: str,
    negative: str,
    lora_scale: float,
    steps: int,
    guidance: float,
    seed: int | None,
    size: int,
    few_step: bool,
    base: str | None = None,
    lora: str | None = None,
) -> tuple[Any, str]:
    """(PIL image with its settings in ``image.info``, settings caption) for the gallery.

    ``seed`` None or negative means a fresh random seed; ``base``/``lora`` None mean the
    env vars (``LORA_BASE_MODEL``, ``LORA_WEIGHTS``); ``lora=""`` means no LoRA.
    """
    seed = None if seed is None or int(seed) < 0 else int(seed)
    t0 = time.perf_counter()
    image, settings = generate_with_settings(
        prompt,
        negative=negative or "",
        lora_scale=float(lora_scale),
        steps=int(steps),
        guidance=float(guidance),
        seed=seed,
        size=int(size),
        few_step=bool(few_step),
        base=base,
        lora=lora,
    )
    caption = settings_caption(settings, time.perf_counter() - t0)
    notice = last_fallback()
    if notice:
        caption += f"\n{notice}"
    return image, caption


def model_status(base: str | None = None, lora: str | None = None) -> str:
    """Markdown: which base and LoRA are configured, and plainly what is missing."""
    base = base or base_from_env()
    lora = lora if lora is not None else lora_from_env()
    base_line, base_ok = describe(base, "Base model", "--base", ENV_BASE)
    lora_line, lora_ok = describe(lora, "Style LoRA", "--lora", ENV_LORA)
    lines = [f"- {base_line}", f"- {lora_line}"]
    if not lora:
        lines.append(f"  (set `{ENV_LORA}` to a LoRA folder or Hub id to apply a style)")
    if not base_ok:
        lines.insert(
            0,
            "**The base model is missing: generation will fail until it is set.** "
            f"Set `{ENV_BASE}` to a local SDXL folder (or a reachable Hub id such as "
            f"`{DEFAULT_BASE}`); `python -m lora.tiny DIR` writes a tiny smoke-test model.",
        )
    if not lora_ok:
        lines.insert(0, f"**The style LoRA is missing:** fix `{ENV_LORA}` or clear it.")
    return "\n".join(lines)
