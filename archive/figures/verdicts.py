"""Whether a candidate box is a picture, and if not, why not: a reason code.

Why in this order: the cheap tests run first, and each test says only what it is
sure of (a text block, a table, title lettering, a chart, an ornament or an initial,
a stain); a box none of them takes is a picture, scored by how much of its ink lies
in big shapes and how far it is above the size floor. The measurements are
``measures``' and ``ornaments``'; this module only orders them into a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from archive.figures.config.verdicts import VERDICTS as C
from archive.figures.ink import PARAMS, Box, Ink
from archive.figures.measures import (
    at_edge,
    big_share,
    faint,
    ink_chart,
    lettering,
    line_art,
    marked_text,
    pale_drawing,
    patch_run_over,
    photo,
    table,
    title_row,
    unprinted,
)
from archive.figures.ornaments import ornament, small_ornament


@dataclass(frozen=True)
class Region:
    """One candidate picture on a page; ``kept`` ones are the crops."""

    box: tuple[float, float, float, float]  # x0, y0, x1, y1, fractions of the image
    score: float  # 0..1, how sure this is a picture a curator wants
    kind: str  # one of figures.KINDS
    kept: bool
    reason: str  # "" when kept, else why not: a code of figures.REASONS
    turned: int = 0  # degrees clockwise that stand it upright: 90 on a page printed across


def judge(box: Box, ink: Ink, min_area: float) -> Region:
    """Keep a box or say why not; the cheap tests run first. The scores fall in the bands
    ``finder`` describes (``VERDICTS``: score_lowest, score_low, score_look, and kept
    pictures from kept_floor up), so a curator's threshold between them keeps the
    verdicts."""
    h, w = ink.full
    th = ink.th
    bw, bh = box[2] - box[0], box[3] - box[1]
    area = bw * bh / (w * h)

    def region(score: float, kind: str, reason: str) -> Region:
        return Region(padded(box, ink), round(score, 3), kind, not reason, reason)

    if min(bw, bh) < C.rule_thin * th or max(bw, bh) > C.rule_aspect * min(bw, bh):
        return region(C.score_lowest, "ornament", "rule")
    if area < C.speck_area * min_area:
        return region(C.score_low, "engraving", "too_small")
    verdict = ink.verdicts.get(box)
    if verdict is None:
        verdict = ink.verdicts[box] = _shape_verdict(box, ink)
    value, kind, reason = verdict  # a score, or a picture's share of ink in big shapes
    if reason:
        return region(value, kind, reason)
    if area < min_area:
        return region(C.score_look, kind, "too_small")
    # sure when most ink is in large shapes and the region is well above the size floor
    shapes = min(1.0, (value - PARAMS["big"]) / C.kept_shapes_span)
    size = min(1.0, area / (C.kept_size_full * min_area))
    return region(C.kept_floor + C.kept_shapes_weight * shapes + C.kept_size_weight * size,
                  kind, "")


def _shape_verdict(box: Box, ink: Ink) -> tuple[float, str, str]:
    """What ``judge`` says of a box whatever the size floor: (score, kind, reason) of a
    box that is not a picture, or (its big-shape share, kind, "") of one that is.

    The dearest part of a page's judging; ``figures._ring_stamps`` asks it of every box before
    ``figures.find`` does, so each page's ``Ink`` keeps the answers (``verdicts``).
    """
    if unprinted(ink):
        return C.score_low, "engraving", "faint"
    if at_edge(box, ink):
        return C.score_low, "engraving", "page_edge"
    if ink_chart(box, ink):
        return C.score_lowest, "other", "chart"
    big = big_share(box, ink)
    if big < PARAMS["big"] and not line_art(box, ink) and not pale_drawing(box, ink):
        return C.text_block_score * big, "engraving", "text_block"
    if table(box, ink):
        return C.score_low, "engraving", "text_block"
    big = max(big, PARAMS["big"])
    if ((box[3] - box[1] < C.lettering_box_h * ink.th and lettering(box, ink))
            or title_row(box, ink)):
        return C.score_low, "engraving", "lettering"
    if patch_run_over(box, ink):  # dearer than the ink's blocks: asked of fewer boxes
        return C.score_lowest, "other", "chart"
    if ornament(box, ink):
        return C.score_look, "ornament", "ornament"
    small = small_ornament(box, ink)
    if small:
        return C.score_look, "ornament", small
    kind = "photo" if photo(box, ink) else "engraving"
    if kind == "photo" and faint(box, ink):
        return C.score_low, kind, "faint"
    if marked_text(box, ink):
        return C.score_low, "engraving", "text_block"
    return big, kind, ""


def padded(box: Box, ink: Ink) -> tuple[float, float, float, float]:
    """The box as fractions of the image, grown by PARAMS["pad"] of its size on each side."""
    h, w = ink.full
    ox, oy = ink.origin
    x0, y0, x1, y1 = box[0] + ox, box[1] + oy, box[2] + ox, box[3] + oy
    px, py = PARAMS["pad"] * (x1 - x0), PARAMS["pad"] * (y1 - y0)
    return (max(0.0, (x0 - px) / w), max(0.0, (y0 - py) / h),
            min(1.0, (x1 + px) / w), min(1.0, (y1 + py) / h))
