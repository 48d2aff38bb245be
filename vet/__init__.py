"""Vet Scanner: livestock photo triage on an embedded EfficientNet-Lite0 model.

``vet.triage(image) -> Triage``. Heavy modules (torch, transformers) load
lazily so importing the package stays cheap for the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vet.pipeline import Triage

__all__ = ["Triage", "triage", "triage_many"]


def triage(image: Any, model: str | None = None, heatmap: bool = False,
           policy: str = "release") -> Triage:
    """Triage one photo (path, bytes or PIL image); see :func:`vet.pipeline.triage`."""
    from vet.pipeline import triage as _triage

    return _triage(image, model=model, heatmap=heatmap, policy=policy)


def triage_many(images: list[Any], model: str | None = None, policy: str = "release",
                heatmap: bool = False) -> list[Triage]:
    """Triage several photos; see :func:`vet.pipeline.triage_many`."""
    from vet.pipeline import triage_many as _many

    return _many(images, model=model, policy=policy, heatmap=heatmap)


def __getattr__(name: str) -> Any:
    if name == "Triage":
        from vet.pipeline import Triage

        return Triage
    raise AttributeError(name)
