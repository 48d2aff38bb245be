"""Boxes as fractions of a page (x0, y0, x1, y1): their area and overlap, for the
finder's second look and the benches that score it the same way."""

from __future__ import annotations

Frac = tuple[float, ...]


def area(box: Frac) -> float:
    return (box[2] - box[0]) * (box[3] - box[1])


def shared(a: Frac, b: Frac) -> float:
    """The area two boxes have in common."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def iou(a: Frac, b: Frac) -> float:
    """Intersection over union (0 for two empty boxes)."""
    inter = shared(a, b)
    union = area(a) + area(b) - inter
    return inter / union if union > 0 else 0.0
