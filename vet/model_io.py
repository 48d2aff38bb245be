"""Where the vet model comes from and how a request gets it.

The model is found in this order: an explicit ``model=`` argument (CLI
``--model``), the ``VET_MODEL`` environment variable, then the folder shipped
in the repository (``vet/model``). Loading goes through the on-demand holder so
a Space frees the memory after each request (``release``), while a batch CLI
run can ask for ``keep`` and load once.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ondemand import OnDemand

DEFAULT_MODEL_DIR = Path(__file__).with_name("model")
_holders: dict[tuple[str, str], OnDemand] = {}
_lock = threading.Lock()


class VetModelError(RuntimeError):
    """The configured model cannot be loaded; the message says how to fix it."""


def model_source(model: str | os.PathLike | None = None) -> str:
    """The folder or Hub id to load, resolved from argument, env, then the shipped folder."""
    if model:
        return str(model)
    return os.environ.get("VET_MODEL") or str(DEFAULT_MODEL_DIR)


def load_model(source: str, device: str = "cpu") -> Any:
    """``AutoModelForImageClassification.from_pretrained`` in float32, with a clear error."""
    import torch
    from transformers import AutoModelForImageClassification
    from transformers.utils import logging as hf_logging

    import vet.modeling_efficientnet_lite  # noqa: F401 - registers the architecture

    hf_logging.disable_progress_bar()  # a per-request "Loading weights" bar is noise
    _freeze_import_garbage()

    path = Path(source).expanduser()
    local = path.exists() or source.startswith((".", "/", "~"))
    if local and not (path / "config.json").is_file():
        raise VetModelError(
            f"vet model folder {path} has no config.json (missing or incomplete checkpoint). "
            "Train one with `python -m vet.train DATA -o FOLDER` or set VET_MODEL=/path/to/folder "
            "(a local folder with config.json and model.safetensors, or a Hub id)."
        )
    try:
        with _sequential_loading():
            model = AutoModelForImageClassification.from_pretrained(
                str(path) if local else source, dtype=torch.float32
            )
    except Exception as exc:  # transformers raises many types; the user needs one message
        raise VetModelError(
            f"cannot load the vet model from {source!r}: {type(exc).__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else ''}. Point VET_MODEL at a local folder "
            "that holds config.json and model.safetensors (no network is needed then)."
        ) from exc
    if getattr(model, "reference", None) is None:
        raise VetModelError(
            f"model {source!r} has no ImageNet reference branch, so the not-livestock gate "
            "cannot work; use a checkpoint written by `python -m vet.train`."
        )
    return model.to(device).eval()


_frozen = False


@contextlib.contextmanager
def _sequential_loading() -> Iterator[None]:
    """Load this small checkpoint on the calling thread only.

    transformers 5 loads tensors on a fresh 4-thread pool by default; every
    request's pool leaves glibc arenas behind, which grew RSS by 5-10% over 50
    load/release requests and made loading slower, not faster, for 300 tensors.
    The switch is an environment variable, so it is set only around this call
    (a concurrent load elsewhere at worst also loads sequentially).
    """
    key = "HF_DEACTIVATE_ASYNC_LOAD"
    old = os.environ.get(key)
    os.environ[key] = "1"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = old


def _freeze_import_garbage() -> None:
    """Move everything alive after the heavy imports out of the cyclic collector's sight.

    The release policy ends each request with a full ``gc.collect()``; with torch
    and transformers imported that walks ~400k long-lived objects, about 0.2-0.5 s
    per photo on two busy cores, longer than the model itself. ``gc.freeze()``
    (done once) leaves those objects alone; the request's own garbage, the model
    included, is still collected as before.
    """
    global _frozen
    if not _frozen:
        import gc

        gc.collect()
        gc.freeze()
        _frozen = True


def holder(model: str | os.PathLike | None = None, policy: str = "release") -> OnDemand:
    """One on-demand holder per (model source, policy)."""
    src = model_source(model)
    with _lock:
        key = (src, policy)
        if key not in _holders:
            _holders[key] = OnDemand(lambda device: load_model(src, device), policy=policy,
                                     name="vet")
        return _holders[key]
