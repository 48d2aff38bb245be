"""Where the models come from: a Hub id or a local folder, resolved without hanging.

Every default is a real Hub id that a user with network access gets. Every
argument also accepts a local folder. When neither works (offline, a typo, a
missing folder) we raise :class:`ModelUnavailable` with a message that says
what is missing and how to point at a local copy, instead of letting
``from_pretrained`` retry the network for minutes.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BASE = "stabilityai/stable-diffusion-xl-base-1.0"
DEFAULT_VAE_FP16 = "madebyollin/sdxl-vae-fp16-fix"
DEFAULT_LCM_LORA = "latent-consistency/lcm-lora-sdxl"

ENV_BASE = "LORA_BASE_MODEL"
ENV_LORA = "LORA_WEIGHTS"
ENV_VAE = "LORA_VAE"
ENV_FEW_STEP = "LORA_FEW_STEP_LORA"

# Seconds we give the Hub to answer before calling a model unreachable.
HUB_TIMEOUT_S = 5.0

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class ModelUnavailable(RuntimeError):
    """A model (base, VAE, LoRA) could be found neither locally nor on the Hub.

    ``what`` names which one ("base model", "LoRA", ...), so a UI can say it in its
    own words; the message is for the log and the CLI.
    """

    def __init__(self, message: str, what: str = "base model") -> None:
        super().__init__(message)
        self.what = what


@dataclass(frozen=True)
class Resolved:
    """A model reference made concrete: where to load it from, and how."""

    ref: str  # what the user asked for
    path: str  # what to pass to from_pretrained / load_lora_weights
    local: bool  # True: pass local_files_only=True, no network at all


def hub_offline() -> bool:
    """HF_HUB_OFFLINE as huggingface_hub reads it, checked at call time, not import time."""
    value = os.environ.get("HF_HUB_OFFLINE", os.environ.get("TRANSFORMERS_OFFLINE", ""))
    return value.strip().lower() in {"1", "true", "yes", "on"}


def base_from_env() -> str:
    return os.environ.get(ENV_BASE) or DEFAULT_BASE


def lora_from_env() -> str | None:
    return os.environ.get(ENV_LORA) or None


def how_to_fix(what: str, flag: str, env: str | None) -> str:
    env_hint = f" or set {env}=/path/to/folder" if env else ""
    extra = (
        "; `python -m lora.tiny DIR` writes a tiny random SDXL for smoke tests"
        if what == "base model"
        else ""
    )
    return f"point at a local copy with {flag} /path/to/folder{env_hint}{extra}"


def looks_like_path(ref: str) -> bool:
    """A filesystem path rather than an ``owner/name`` Hub id."""
    return ref.startswith(("/", ".", "~", "\\")) or not _HUB_ID.match(ref)


def resolve(
    ref: str, what: str = "base model", flag: str = "--base", env: str | None = ENV_BASE
) -> Resolved:
    """A local folder as is; a Hub id from the cache, or from the Hub if it answers quickly."""
    fix = how_to_fix(what, flag, env)
    folder = Path(ref).expanduser()
    if folder.is_dir():
        return Resolved(ref, str(folder), local=True)
    if folder.is_file() and folder.suffix == ".safetensors":  # a single LoRA file
        return Resolved(ref, str(folder), local=True)
    if looks_like_path(ref):
        raise ModelUnavailable(f"{what} not found: no folder at {ref!r}; {fix}", what)
    cached = _from_cache(ref)
    if cached:
        return Resolved(ref, cached, local=True)
    if hub_offline():
        raise ModelUnavailable(
            f"{what} {ref!r} is not in the local Hugging Face cache and HF_HUB_OFFLINE is set; "
            f"{fix}", what
        )
    _check_hub(ref, what, fix)
    return Resolved(ref, ref, local=False)


def _from_cache(repo_id: str) -> str | None:
    """The snapshot folder of ``repo_id`` when it was downloaded before, else None."""
    try:
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id, local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means "not cached"
        return None


def _check_hub(repo_id: str, what: str, fix: str) -> None:
    """One short request: unreachable or unknown repos fail in seconds, not minutes."""
    from huggingface_hub import HfApi

    try:
        HfApi().model_info(repo_id, timeout=HUB_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - network, 404, auth: all "unavailable"
        reason = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        raise ModelUnavailable(
            f"{what} {repo_id!r} cannot be reached on the Hugging Face Hub ({reason}); {fix}", what
        ) from exc


def availability(ref: str | None) -> str:
    """Where a model would come from, without downloading: ``none``, ``local``, ``cached``,
    ``hub`` (downloaded on first use) or ``missing``."""
    if not ref:
        return "none"
    if Path(ref).expanduser().exists():
        return "local"
    if looks_like_path(ref):
        return "missing"
    if _from_cache(ref):
        return "cached"
    return "missing" if hub_offline() else "hub"
