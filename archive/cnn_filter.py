"""`--filter cnn`: the layout model plus eight CNN features, for modern or mixed archives.

Why it exists: the default filter keeps a third of modern archive text pages (tables,
slides, handwriting). Adding eight principal components of a small CNN's pooled features
raised text pages dropped from 0.654 to 0.820 at the same 0.957 of illustrations kept
(nested leave-one-document-out CV, `python bench/filter_alternatives.py`), for about 60 ms
more on each page it runs on and torch in every worker. That is why it is opt-in.

The CNN is the Vet Scanner's EfficientNet-Lite0 (`vet/model`), whose pooled features
separated pages better than the plain ImageNet weights (AUC 0.974 against 0.939).
torch is imported on the first page the layout model is unsure of, so `--filter default`
never pays for it, and the CNN belongs to the filter object: it is gone when the job that
built the filter ends.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from archive.errors import ArchiveError
from archive.filter import (
    ModelFilter,
    Verdict,
    _flatten,
    model_probability,
)
from archive.filter import load_model as load_layout_model

CNN_MODEL_PATH = Path(__file__).with_name("filter_cnn_model.json")
CNN_SIZE = (256, 320)
BRANCH = 11  # the trunk's blocks before this are plain ImageNet; after, the Vet fine-tune


def trunk_path() -> Path:
    """The Vet Scanner model folder this filter borrows its CNN from."""
    import vet

    return Path(vet.__file__).with_name("model")


def trunk_digest(folder: Path | None = None) -> str:
    """sha256 of the trunk's weights: the PCA and coefficients only fit the trunk they saw."""
    weights = (folder or trunk_path()) / "model.safetensors"
    h = hashlib.sha256()
    with open(weights, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_trunk() -> Any:
    """The Vet Scanner model on the CPU; one thread in a worker, as there is one per core."""
    try:
        import torch

        from vet.model_io import load_model

        if multiprocessing.parent_process() is not None:  # never retune the app's own torch
            torch.set_num_threads(1)
        return load_model(str(trunk_path()))
    except Exception as exc:  # a broken setup, not a bad page: stop with a reason
        raise ArchiveError(
            f"--filter cnn needs torch and the Vet Scanner model in {trunk_path()} "
            f"({type(exc).__name__}: {exc}); use --filter default instead"
        ) from exc


def pooled_features(
    page: Image.Image, trunk: Any, size: tuple[int, int] = CNN_SIZE
) -> np.ndarray:
    """The trunk's 1280 pooled features of the page squeezed to `size`, in RGB."""
    import torch

    from vet.imaging import normalize

    rgb = _flatten(page).convert("RGB").resize(size)
    px = normalize(torch.from_numpy(np.array(rgb)).permute(2, 0, 1)[None])
    with torch.inference_mode():
        _, pooled = trunk.forward_from_block(trunk.forward_to_block(px, BRANCH), BRANCH)
    return pooled[0].float().numpy()


def cnn_components(page: Image.Image, model: dict, trunk: Any) -> np.ndarray:
    """The page's principal CNN components, as fitted with the model."""
    comps = np.asarray(model["pca_components"])
    size = tuple(model.get("cnn_size", CNN_SIZE))
    return (pooled_features(page, trunk, size) - np.asarray(model["pca_mean"])) @ comps.T


@lru_cache(maxsize=1)
def load_cnn_model(path: str = str(CNN_MODEL_PATH)) -> dict:
    """Shipped coefficients and PCA; written by bench/filter_alternatives.py --write."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


class CnnFilter(ModelFilter):
    """The layout model's screening and verdict, with CNN components where it is unsure.

    The CNN runs only where the layout model alone is unsure: below `skip_cnn_below` or
    above `skip_cnn_above` its verdict stands. On the labelled pages that skips about half
    of the CNN runs with identical CV figures, and on a clean magazine nearly all text pages.
    """

    name = "cnn"

    def __init__(
        self,
        threshold: float | None = None,
        min_figure_area: float | None = None,
        model: dict | None = None,
    ) -> None:
        super().__init__(None, min_figure_area, load_layout_model())
        self.cnn_model = load_cnn_model() if model is None else model
        self.threshold = float(self.cnn_model["threshold"] if threshold is None else threshold)
        self.sure_text = min(float(self.cnn_model.get("skip_cnn_below", 0.0)), self.threshold)
        self.sure_art = max(float(self.cnn_model.get("skip_cnn_above", 1.01)), self.threshold)
        self._trunk: Any = None  # loaded on the first unsure page, released with the filter

    def decide(self, page: Image.Image, feats: np.ndarray, p: float) -> Verdict:
        if p < self.sure_text:
            return Verdict(False, p, f"text p={p:.2f}, layout alone")
        if p >= self.sure_art:
            return Verdict(True, p, f"illustration p={p:.2f}, layout alone")
        if self._trunk is None:
            self._trunk = load_trunk()  # raises ArchiveError: one reason, not per-page noise
        try:
            feats = np.concatenate([feats, cnn_components(page, self.cnn_model, self._trunk)])
        except Exception as exc:  # never let one odd page stop an archive run
            return Verdict(False, 0.0, f"unreadable page ({type(exc).__name__})")
        return super().decide(page, feats, model_probability(feats, self.cnn_model))
