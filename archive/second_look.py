"""A second look at a small crop, at another scale, that may only take it back.

Why: the finder judges initials, devices and title pieces by their size in text
heights, and the text height of an early book's preview is a whole pixel of 3-6. Two
scans of one page can stand a quarter apart on it, so a decorated initial is an initial
on one scan and a picture on the next (``bench/figure_robustness.py``). Looking again at
1.25 times the preview moves that rounding; a crop the other look calls an initial, an
ornament, lettering, a text block or a rule is taken back. A miss of the other look
changes nothing, so a picture is never lost to it, and a page whose crops are all big
(a plate, a page-wide engraving) is never looked at twice: the doubt is about small
things, and the second look costs a whole finder pass.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from archive.boxes import area, iou

if TYPE_CHECKING:
    from archive.figures import Region

SCALE = 1.25  # of the preview: a 4 px text height becomes 5, a 5 becomes 6
DOUBT_AREA = 0.1  # of the page: kept crops smaller than this are looked at twice
SAME = 0.5  # IoU at which the other look's candidate is the same box
VETOES = frozenset({"initial", "ornament", "lettering", "text_block", "rule"})


def doubtful(regions: list[Region]) -> bool:
    """Whether the page has a kept crop small enough to be looked at again."""
    return any(_in_doubt(r) for r in regions)


def veto(regions: list[Region], other: list[Region]) -> list[Region]:
    """``regions`` with each small kept crop that ``other`` (the second look's
    candidates) calls a non-picture given that verdict: its kind, score and reason."""
    out = []
    for r in regions:
        if _in_doubt(r):
            same = max(other, key=lambda o: iou(r.box, o.box), default=None)
            if (same is not None and not same.kept and same.reason in VETOES
                    and iou(r.box, same.box) >= SAME):
                r = replace(r, kind=same.kind, score=same.score, kept=False,
                            reason=same.reason)
        out.append(r)
    return out


def _in_doubt(region: Region) -> bool:
    return region.kept and area(region.box) < DOUBT_AREA
