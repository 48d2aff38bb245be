"""Where the models come from: a Hub id or a local folder, resolved without hanging.

Every default is a real Hub id that a user with network access gets. Every
argument also accepts a local folder. When neither works (offline, a typo, a
missing folder) we raise :class:`ModelUnavailable` with a message that says
what is missing and how to point at a local copy, instead of letting
``from_pretrained`` retry the network for minutes.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
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
# Seconds the tab's one start-up look at the base model may take in all: the Hub answers
# in well under one when it is there; a network that drops packets must not hold the app.
BASE_CHECK_S = 3.0
# The SDXL parts whose weights from_pretrained loads (and downloads from a Hub id).
SDXL_WEIGHTS = ("unet", "vae", "text_encoder", "text_encoder_2")
_WEIGHT_SUFFIXES = (".safetensors", ".bin")

log = logging.getLogger("borde.lora")

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


@dataclass(frozen=True)
class BaseCheck:
    """Whether the base model can be had, found without downloading it.

    ``state``: ``local`` (a folder that loads), ``cached`` (a Hub id already downloaded),
    ``hub`` (the Hub answered for it: downloaded on first use), ``broken`` (there, but not
    a diffusers SDXL) or ``missing``. ``download_bytes``: what a ``hub`` base downloads.
    """

    state: str
    download_bytes: int | None = None


def check_base(ref: str, timeout: float = BASE_CHECK_S) -> BaseCheck:
    """One bounded look at the base model: never downloads, never waits past ``timeout``.
    Where it would come from is :func:`availability`'s; this adds whether it would load and,
    for the Hub, whether the Hub answers for it."""
    where = availability(ref)
    if where == "local":
        problem = sdxl_folder_problem(Path(ref).expanduser())
        if problem:
            log.warning("base model %s will not load: %s", ref, problem)
        return BaseCheck("broken" if problem else "local")
    if where == "cached" and not sdxl_folder_problem(Path(_from_cache(ref))):
        return BaseCheck("cached")
    if where in ("none", "missing") or hub_offline():
        return BaseCheck("missing")
    return _ask_hub(ref, timeout)  # "hub", or a cached copy that would not load


def sdxl_folder_problem(folder: Path) -> str | None:
    """Why ``folder`` would not load as a diffusers SDXL pipeline; None when it would.

    Reads only the index and lists the parts' folders: loading SDXL to find out would
    read 7-14 GB.
    """
    try:
        index = json.loads((folder / "model_index.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"no readable model_index.json ({type(exc).__name__})"
    entries = index.items() if isinstance(index, dict) else []
    listed = {part for part, entry in entries if isinstance(entry, list) and entry and entry[0]}
    if not set(SDXL_WEIGHTS) <= listed:
        return "model_index.json does not list a UNet and two text encoders: not SDXL"
    for part in sorted(listed):
        if not (folder / part).is_dir():
            return f"{part}/ is missing"
    for part in SDXL_WEIGHTS:
        files = list((folder / part).iterdir()) if (folder / part).is_dir() else []
        if not (folder / part / "config.json").is_file():
            return f"{part}/config.json is missing"
        if not any(f.name.endswith(_WEIGHT_SUFFIXES) for f in files):
            return f"{part}/ holds no weights"
    return None


def _ask_hub(repo_id: str, timeout: float) -> BaseCheck:
    """The Hub's file list for ``repo_id``, given ``timeout`` seconds in all.

    Asked from a daemon thread, because a name lookup is not bound by the HTTP timeout; a
    thread still waiting afterwards holds nothing and ends with the process.
    """
    answer: dict[str, object] = {}

    def ask() -> None:
        try:
            answer["files"] = _hub_files(repo_id, timeout)
        except Exception as exc:  # noqa: BLE001 - network, 404, auth: all "missing"
            answer["error"] = exc

    t0 = time.perf_counter()
    worker = threading.Thread(target=ask, name="borde-base-check", daemon=True)
    worker.start()
    worker.join(timeout)
    files = answer.get("files")
    if not isinstance(files, dict):
        error = answer.get("error")
        why = (str(error).strip().splitlines() or [type(error).__name__])[0][:160] if error \
            else f"no answer in {timeout:g} s"
        log.warning("base model %s: the Hub did not answer for it (%s, %.1f s)", repo_id, why,
                    time.perf_counter() - t0)
        return BaseCheck("missing")
    if "model_index.json" not in files:
        log.warning("base model %s: the Hub repo is not a diffusers pipeline", repo_id)
        return BaseCheck("broken")
    return BaseCheck("hub", download_bytes(files))


def _hub_files(repo_id: str, timeout: float) -> dict[str, int]:
    """{file name: bytes} of the repo; HF_ENDPOINT read now, as the offline flag is."""
    from huggingface_hub import HfApi

    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)
    info = api.model_info(repo_id, files_metadata=True, timeout=timeout)
    return {s.rfilename: int(s.size or 0) for s in info.siblings or []}


def download_bytes(files: dict[str, int]) -> int | None:
    """What ``from_pretrained`` (no variant) fetches: each part's plain weights,
    safetensors where the repo has them; None when the list shows no weights."""
    total = 0
    for part in SDXL_WEIGHTS:
        for suffix in _WEIGHT_SUFFIXES:
            sizes = [size for name, size in files.items() if _plain_weights(name, part, suffix)]
            if sizes:
                total += sum(sizes)
                break
    return total or None


def _plain_weights(name: str, part: str, suffix: str) -> bool:
    """``unet/diffusion_pytorch_model.safetensors`` (or a shard), not ``....fp16.safetensors``."""
    folder, _, file = name.rpartition("/")
    return folder == part and file.endswith(suffix) and "." not in file[: -len(suffix)]
