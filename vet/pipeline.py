"""Photo in, triage out: status, species, top-3 conditions, urgency, advice, heatmap.

The decision order is deliberate: a broken file is an ``error``; a photo the
ImageNet head does not see as an animal is ``not_livestock`` and never gets a
disease answer; a low-confidence or non-cattle result is ``uncertain`` and
comes with photo tips; only then ``ok``.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from vet.gate import SPECIES_ES, animal_mass, farm_mass, guess_species, is_livestock
from vet.imaging import IMAGE_SIZE, BadImage, load_image, to_tensor

CONDITIONS_FILE = Path(__file__).with_name("conditions.json")
MIN_CONFIDENCE = 0.55  # calibrated top-1 below this is "uncertain"
CATTLE = "cow"


@functools.lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The conditions table (data, not code)."""
    return json.loads(CONDITIONS_FILE.read_text(encoding="utf-8"))


@dataclass
class Triage:
    """One photo's answer. ``heatmap`` is a PIL overlay when requested, else None."""

    file: str
    status: str  # ok / uncertain / not_livestock / error
    species: str | None = None
    species_p: float | None = None
    condition: str | None = None
    confidence: float | None = None
    urgency: str | None = None
    top: list[dict[str, float]] = field(default_factory=list)
    advice: dict[str, str] = field(default_factory=dict)
    disclaimer: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    livestock_p: float | None = None
    heatmap: Image.Image | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields (the heatmap image is left out)."""
        d = asdict(self)
        d.pop("heatmap")
        return d

    def text(self, lang: str = "en") -> str:
        """Advice plus the disclaimer, in one language."""
        lang = lang if lang in ("en", "es") else "en"
        parts = [self.advice.get(lang, "")] if self.advice else []
        if self.reason and self.status == "error":
            parts.append(self.reason)
        parts.append(self.disclaimer.get(lang, ""))
        return "\n\n".join(p for p in parts if p)


def _disclaimer() -> dict[str, str]:
    return dict(table()["disclaimer"])


def _error(name: str, reason: str) -> Triage:
    return Triage(file=name, status="error", reason=reason, disclaimer=_disclaimer())


def _name(image: Any, index: int) -> str:
    if isinstance(image, (str, os.PathLike)):
        return str(image)
    return getattr(image, "filename", "") or f"image-{index}"


def decide(
    name: str,
    cond_probs: list[float],
    labels: list[str],
    imagenet_probs: Any,
    prototype_similarity: float | None = None,
    threshold: float | None = None,
) -> Triage:
    """Turn calibrated condition probabilities and ImageNet probabilities into a Triage."""
    tab = table()
    species, species_p = guess_species(imagenet_probs)
    live_p = float(farm_mass(imagenet_probs))
    order = sorted(range(len(labels)), key=lambda k: -cond_probs[k])
    top = [{"label": labels[k], "p": round(float(cond_probs[k]), 4)} for k in order[:3]]
    base = Triage(file=name, status="ok", disclaimer=_disclaimer(), livestock_p=round(live_p, 4))
    if not is_livestock(imagenet_probs, prototype_similarity, threshold):
        base.status = "not_livestock"
        base.advice = dict(tab["not_livestock"])
        sim = "" if prototype_similarity is None else (
            f", similarity to training photos {prototype_similarity:.3f} < {threshold:.3f}")
        base.reason = (f"farm-animal probability {live_p:.3f}, "
                       f"animal probability {float(animal_mass(imagenet_probs)):.3f}{sim}")
        return base
    best = labels[order[0]]
    info = tab["conditions"].get(best, {})
    base.species = species if species_p >= 0.05 else "unknown"
    base.species_p = round(species_p, 4)
    base.condition = best
    base.confidence = round(float(cond_probs[order[0]]), 4)
    base.urgency = info.get("urgency", "soon")
    base.top = top
    advice = {lang: info.get("advice", {}).get(lang, best) for lang in ("en", "es")}
    notes = []
    if base.confidence < MIN_CONFIDENCE:
        base.status = "uncertain"
        notes.append(tab["tips"])
        base.reason = f"low confidence ({base.confidence:.0%})"
    # A weak non-cattle guess (an udder close-up can look like a pig) is overruled when
    # the photo is as close to the cattle training photos as the gate asks; a confident
    # one (>= 0.5) never is: pigs also sit close to cattle in feature space.
    like_training = (prototype_similarity is not None and threshold is not None
                     and prototype_similarity >= threshold)
    if base.species not in (CATTLE, "unknown") and (species_p >= 0.5 or not like_training):
        base.status = "uncertain"
        notes.append(tab["other_species"])
        base.reason = f"looks like a {species} ({species_p:.0%}); conditions are cattle-only"
    for lang in ("en", "es"):
        extra = " ".join(n[lang] for n in notes)
        advice[lang] = f"{advice[lang]} {extra}".strip()
    if base.species and base.species != "unknown":
        advice["es"] = advice["es"].replace("{species}", SPECIES_ES.get(base.species, ""))
    base.advice = advice
    return base


def answer_probs(config: Any, logits: Any) -> tuple[list[str], Any]:
    """Calibrated probabilities over the labels the model may answer, in that order.

    The augmented-only classes are trained but never answered, and the temperature
    fitted on validation data makes the percentages honest.
    """
    import torch

    trained = [config.id2label[k] for k in range(logits.shape[1])]
    labels = list(getattr(config, "answer_labels", None) or trained)
    cols = [trained.index(c) for c in labels]
    temp = float(getattr(config, "calibration_temperature", 1.0) or 1.0)
    return labels, torch.softmax(logits.float()[:, cols] / temp, -1)


def triage_many(
    images: list[Any],
    model: str | os.PathLike | None = None,
    policy: str = "release",
    heatmap: bool = False,
    batch_size: int = 16,
    device: str | None = None,
) -> list[Triage]:
    """Triage several photos with one model load per batch (``keep`` loads once overall)."""
    import torch

    from vet.model_io import holder

    results: list[Triage | None] = [None] * len(images)
    good: list[tuple[int, str, Image.Image]] = []
    for i, image in enumerate(images):
        name = _name(image, i)
        try:
            # Without a heatmap to draw, a big JPEG may decode at reduced scale (>= 2x the
            # model input): a 12 MP phone photo then decodes several times faster.
            good.append((i, name, load_image(image, draft=None if heatmap else 2 * IMAGE_SIZE)))
        except BadImage as exc:
            results[i] = _error(name, str(exc))
        except Exception as exc:  # noqa: BLE001 - a bad file must never crash a herd run
            results[i] = _error(name, f"cannot read image: {type(exc).__name__}: {exc}")
    h = holder(model, policy)
    for s in range(0, len(good), batch_size):
        chunk = good[s: s + batch_size]

        def run(m, chunk=chunk):
            size = int(getattr(m.config, "image_size", 224))
            x = to_tensor([img for _, _, img in chunk], size)
            out = m(pixel_values=x)
            trained = [m.config.id2label[k] for k in range(out.logits.shape[1])]
            labels, cond = answer_probs(m.config, out.logits)
            ref = torch.softmax(out.reference_logits.float(), -1)
            sims = out.prototype_similarity
            thr = getattr(m.config, "prototype_threshold", None)
            answers = []
            for j, (_, name, img) in enumerate(chunk):
                sim = float(sims[j]) if sims is not None else None
                t = decide(name, cond[j].tolist(), labels, ref[j], sim, thr)
                if heatmap and t.status != "not_livestock":
                    from vet.heatmap import grad_cam, overlay

                    k = trained.index(t.condition)
                    t.heatmap = overlay(img, grad_cam(m, img, k, size))
                answers.append(t)
            return answers

        for (i, _, _), t in zip(chunk, h.run(run, device=device), strict=True):
            results[i] = t
    return [r for r in results if r is not None]


def triage(
    image: str | os.PathLike | Image.Image | bytes,
    model: str | os.PathLike | None = None,
    heatmap: bool = False,
    policy: str = "release",
) -> Triage:
    """Triage one photo (path, bytes or PIL image). Never raises on a bad image."""
    return triage_many([image], model=model, policy=policy, heatmap=heatmap)[0]
