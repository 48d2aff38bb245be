"""What the LoRA tab calls. No gradio here: app.py owns the widgets, this owns the work.

``generate_for_ui`` and ``gpu_duration`` take the same arguments in the same order, so
app.py can write ``@gpu(duration=gpu_duration)`` on a handler with that signature.
What the tab says is decided here as codes (:func:`model_state`, :func:`error_code`,
:func:`check_style_file`) and put into words by the caller's ``say``; the exceptions'
own text, written for developers, goes to the log only. A sentence kept to be said again
(after a language switch) is a :data:`Said`: its key and its fields.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ondemand import last_fallback

from .lora_file import BadLoraFile, LoraFile, inspect
from .models import (
    _HUB_ID,
    BASE_CHECK_S,
    ModelUnavailable,
    availability,
    base_from_env,
    check_base,
    lora_from_env,
)
from .pipeline import FEW_STEP_RANGE, MAX_SEED, generate_with_settings

log = logging.getLogger("borde.lora")
Say = Callable[..., str]
# A sentence as a code: its ui_strings key and the fields it is filled with.
Said = tuple[str, dict[str, str]]

EXAMPLE_PROMPTS = [
    "a cyber-monocle in the style of an 1890 engraving",
    "a steam-powered airship over a harbour, fine cross-hatching, 1890 engraving",
    "portrait of a lighthouse keeper with a brass prosthetic arm, etched plate",
    "an anatomical plate of a mechanical beetle, copperplate engraving",
    "a city street at night lit by arc lamps, wood engraving from an illustrated weekly",
]
DEFAULT_NEGATIVE = "photo, colour, blurry, low quality, watermark, text"
SIZES = ["512", "768", "1024"]  # strings: the API schema shows them so

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
    *_rest: Any,
) -> int:
    """Seconds to ask ``@spaces.GPU`` for: load + steps x per-step cost, with 50 % margin."""
    steps = int(steps or 30)
    if few_step:
        steps = min(max(steps, FEW_STEP_RANGE[0]), FEW_STEP_RANGE[1])
    per_step = _STEP_S_1024 * (int(size or 1024) / 1024) ** 2
    if few_step or (guidance is not None and float(guidance) <= 1.0):
        per_step /= 2  # no unconditional pass
    return int(min(max((_FIXED_S + steps * per_step) * 1.5, 20), 300))


def _english(key: str, **values: Any) -> str:
    words = {"lora_caption": "seed {seed} · {steps} steps · guidance {guidance} · {size} · "
                             "{style} · {device}",
             "lora_caption_style": "LoRA {name} @ {scale}", "lora_caption_nostyle": "no LoRA",
             "lora_caption_fast": "few-step (LCM)", "lora_caption_cpu": "CPU fallback"}
    return words[key].format(**values)


def settings_caption(settings: dict[str, Any], seconds: float | None = None,
                     say: Say = _english) -> str:
    """One line under each gallery image: enough to make it again."""
    lora = settings.get("lora")
    style = (say("lora_caption_style", name=Path(lora).name or lora,
                 scale=f"{settings['lora_scale']:g}") if lora else say("lora_caption_nostyle"))
    text = say("lora_caption", seed=settings["seed"], steps=settings["steps"],
               guidance=f"{settings['guidance']:g}",
               size=f"{settings['width']}x{settings['height']}", style=style,
               device=settings.get("device", "?"))
    if settings.get("few_step"):
        text += " · " + say("lora_caption_fast")
    if seconds is not None:
        text += f" · {seconds:.1f} s"
    return text


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
    say: Say = _english,
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
    caption = settings_caption(settings, time.perf_counter() - t0, say)
    notice = last_fallback()
    if notice:
        log.warning("%s", notice)
        caption += " · " + say("lora_caption_cpu")
    return image, caption


@dataclass(frozen=True)
class ModelState:
    """Which base and style LoRA the tab would use, as codes (see ``models.check_base`` and
    ``models.availability``)."""

    base: str
    base_state: str  # local | cached | hub | broken | missing
    lora: str | None
    lora_state: str  # none | local | cached | hub | missing
    base_gb: int | None = None  # hub: about how many GB the first image downloads

    @property
    def can_run(self) -> bool:
        return self.base_state in ("local", "cached", "hub")

    @property
    def style(self) -> str:
        """The configured style LoRA to use: "" (none) when it cannot be found."""
        return self.lora if self.lora and self.lora_state != "missing" else ""


def model_state(base: str | None = None, lora: str | None = None,
                timeout: float = BASE_CHECK_S) -> ModelState:
    """What is there before any click: one look, at most ``timeout`` seconds, no download."""
    base = base or base_from_env()
    lora = lora if lora is not None else lora_from_env()
    t0 = time.perf_counter()
    found = check_base(base, timeout)
    log.info("base model %s: %s, seen in %.2f s", base, found.state, time.perf_counter() - t0)
    size = found.download_bytes
    return ModelState(base, found.state, lora, availability(lora),
                      max(1, round(size / 1e9)) if size else None)


def status_keys(state: ModelState) -> tuple[str, str]:
    """The ui_strings keys of the tab's two up-front lines: the base, then the style."""
    style = {"none": "none", "missing": "missing"}.get(state.lora_state, "ok")
    base = state.base_state
    if base == "hub" and not state.base_gb:
        base = "hub_unsized"
    return f"lora_base_{base}", f"lora_style_{style}"


def check_style_file(path: str | None, base: str | None = None) -> LoraFile | None:
    """The uploaded style LoRA, checked (``BadLoraFile`` with a code if it is not one)."""
    if not path:
        return None
    if not str(path).lower().endswith(".safetensors"):
        raise BadLoraFile("wrong_name", f"{Path(path).name}: the name is not *.safetensors")
    state_base = base or base_from_env()
    return inspect(path, state_base if availability(state_base) == "local" else None)


def choose_style(upload: str | None, hub_id: str | None, state: ModelState) -> str:
    """The style LoRA for one request: an upload, else a Hub id, else the configured one."""
    if upload:
        return str(upload)
    hub_id = (hub_id or "").strip()
    if hub_id:
        if not _HUB_ID.match(hub_id):
            raise BadLoraFile("bad_hub_id", f"{hub_id!r} is not an owner/name Hub id")
        return hub_id
    return state.style


def check_request(prompt: str) -> str | None:
    """A code for input the tab can refuse before any model loads, else None."""
    return "prompt" if not (prompt or "").strip() else None


def error_code(exc: BaseException) -> str:
    """What went wrong, as the code of one plain sentence (``lora_err_<code>``)."""
    if isinstance(exc, BadLoraFile):
        return f"file_{exc.code}"
    if isinstance(exc, ModelUnavailable):
        return {"base model": "base", "LoRA": "style"}.get(exc.what, "few_step")
    return "other"


def error_said(exc: BaseException) -> Said:
    """The sentence for ``exc``: ``lora_err_<code>`` and its fields (a LoRA's base)."""
    fields = dict(exc.fields) if isinstance(exc, BadLoraFile) else {}
    return f"lora_err_{error_code(exc)}", fields
