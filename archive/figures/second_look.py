"""A second look at a small crop, at another scale, that may only take it back.

Why: the finder judges initials, devices and title pieces by their size in text
heights, and the text height of an early book's preview is a whole pixel of 3-6. Two
scans of one page can stand a quarter apart on it, so a decorated initial is an initial
on one scan and a picture on the next (``bench/figure_robustness.py``). Looking again at
1.25 times the preview moves that rounding; a crop the other look calls an initial, an
ornament, lettering, a text block or a rule is taken back, and so is a crop the other
look keeps less than half of while it judges half of it or more part of a box that is
no picture (a piece of a tailpiece, of a title, of a rule). On the early books and the
chapbooks at 9 preview sizes every small crop that was a picture was covered by the
other look's kept crops (488 of 488, 80% of it or more). A miss of the other look
(nothing judged there) changes nothing, and a page whose crops are all big (a plate, a
page-wide engraving) is never looked at twice: the doubt is about small things, and the
second look costs a whole finder pass.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from archive.boxes import area, iou, shared
from archive.figures.config.finder import LOOK as C

if TYPE_CHECKING:
    from archive.figures.verdicts import Region

# The tunings live in ``config.finder.LOOK`` (each with where it was measured); these are
# its fields under the names importers use.
SCALE = C.second_scale  # of the preview: a 4 px text height becomes 5, a 5 becomes 6
DOUBT_AREA = C.doubt_area  # of the page: kept crops smaller than this are looked at twice
SAME = C.same_iou  # IoU at which the other look's candidate is the same box
COVER = C.cover  # share of a small crop that the other look keeps, or judges no picture
NO_VERDICT = frozenset({"too_small", "outside_page"})
VETOES = frozenset({"initial", "ornament", "lettering", "text_block", "rule"})


def doubtful(regions: list[Region]) -> bool:
    """Whether the page has a kept crop small enough to be looked at again."""
    return any(_in_doubt(r) for r in regions)


def veto(regions: list[Region], other: list[Region]) -> list[Region]:
    """``regions`` with each small kept crop that ``other`` (the second look's
    candidates) calls a non-picture given that verdict: its kind, score and reason."""
    out = []
    for r in regions:
        said = _verdict(r, other) if _in_doubt(r) else None
        if said is not None:
            r = replace(r, kind=said.kind, score=min(r.score, said.score), kept=False,
                        reason=said.reason)
        out.append(r)
    return out


def _verdict(crop: Region, other: list[Region]) -> Region | None:
    """The other look's candidate that takes the crop back, if any: the same box called
    a non-picture, or, where no kept crop of the other look covers half of the crop, a
    box it judged no picture that does (the crop was a piece of a rule, an ornament, a
    title). A box only under the size floor, or only outside the other look's page
    extent, is no verdict: a picture of 1% of the page is as likely 0.99% at 1.25 times,
    and an extent can move with the scale."""
    same = max(other, key=lambda o: iou(crop.box, o.box), default=None)
    if (same is not None and not same.kept and same.reason in VETOES
            and iou(crop.box, same.box) >= C.same_iou):
        return same
    whole = area(crop.box)
    if sum(shared(crop.box, o.box) for o in other if o.kept) >= C.cover * whole:
        return None
    said = [o for o in other if not o.kept and o.reason not in NO_VERDICT]
    near = max(said, key=lambda o: shared(crop.box, o.box), default=None)
    return near if near is not None and shared(crop.box, near.box) >= C.cover * whole else None


def _in_doubt(region: Region) -> bool:
    return region.kept and area(region.box) < C.doubt_area
