"""A line of text cut off a crop's top or bottom edge, at the resolution it is cut at.

Why: the finder sees the page at preview scale, where a rubric or a caption set tight
on a miniature's frame is glued to it, and the box's margin takes in the letters of the
next line; a style LoRA learns whatever is in its images, text too. At the crop's own
resolution a row of paper parts the line from the picture. On the early books as
libraries publish them 14 of 45 crops carried such a line or part of one.

A line beyond that row is cut when it reads as text: a strip no taller than a line
(LINE_H text heights), of many small shapes (PIECES at least) spread across the crop
(SPAN of its width), none as wide as half the crop (a frame's rule) and most of them
narrow (LETTER_W: a broken rule's pieces and a ground's strokes are wide) and as tall
as letters are (LETTER_H of the text height, where the edge does not cut them). A line
whose letters touch the frame's rule in the scan too is parted from it at the thinnest
row between (``_on_rule``). The crop is upright (as the pipeline turns it), so rubrics
and captions lie above or below.
"""

from __future__ import annotations

import numpy as np

from archive import components
from archive.resize import crop_array, upright

Box = tuple[float, float, float, float]

GAP = 0.02  # a row of paper: at most this share of it inked (specks, show-through)
DEEP = 3.0  # text heights from the edge a line and the paper after it may take
LINE_H, SPAN, PIECES = 2.2, 0.4, 6
LETTER_W, LETTER_H, WIDE = 1.6, 0.4, 0.5
LETTER_MAX = 1.8  # text heights: no letter of a line is taller (an initial, a picture is)
INK = 0.6  # of the paper's level (its darkest channel): darker is ink, red and blue too
ROUNDS = 3  # lines cut from one edge at most
RULE = 0.6  # a frame's rule: a row this much inked (a line of text's rows: 0.2-0.55)
VALLEY, VALLEY_INK = 1 / 3, 0.12
LINE_INK = 0.15  # a line's darkest row is inked this much at least: its letters' core
SAMPLE = 40_000  # pixels the paper's level is read from: a percentile of them all is dear


def cut_lines(crop: np.ndarray, text_height: float) -> tuple[int, int]:
    """Rows of text to cut off the top and the bottom of an upright RGB (or grey) crop;
    ``text_height`` is the page's text height in the crop's pixels (0: unknown, no cut)."""
    h = crop.shape[0]
    if text_height < 2 or h < 3 * DEEP * text_height:
        return 0, 0
    step = max(1, round((crop.shape[0] * crop.shape[1] / SAMPLE) ** 0.5))
    paper = float(np.percentile(_darkest(crop[::step, ::step]), 95))
    band = min(h // 3, int(ROUNDS * DEEP * text_height) + 1)
    top = _cut(_darkest(crop[:band]) < INK * paper, text_height)
    bottom = _cut(_darkest(crop[h - band:])[::-1] < INK * paper, text_height)
    return top, bottom


def trimmed(img: np.ndarray, box: Box, turned: int, text_height: float) -> Box:
    """``box`` (fractions of the page ``img``) without the lines of text ``cut_lines``
    finds on its crop stood upright; ``text_height`` is the finder's, a fraction of the
    page's long side."""
    crop = upright(crop_array(img, box), turned)
    cut = cut_lines(crop, text_height * max(img.shape[:2]))
    return trimmed_box(box, turned, cut, (img.shape[1], img.shape[0])) if any(cut) else box


def trimmed_box(box: Box, turned: int, cut: tuple[int, int], size: tuple[int, int]) -> Box:
    """The box (fractions of a page of ``size`` px, width first) without the rows cut
    off its upright crop: a crop turned a quarter clockwise has its top at the left."""
    top, bottom = cut
    x0, y0, x1, y1 = box
    w, h = size
    if (turned // 90) % 4 == 1:
        return (x0 + top / w, y0, x1 - bottom / w, y1)
    return (x0, y0 + top / h, x1, y1 - bottom / h)


def _darkest(rgb: np.ndarray) -> np.ndarray:
    """Each pixel's darkest channel: black, red and blue ink are all dark in it."""
    if rgb.ndim == 2:
        return rgb
    return np.minimum(np.minimum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])  # 20x min(axis=2)


def _cut(ink: np.ndarray, th: float) -> int:
    """Rows cut from the top of ``ink``: each line of text beyond a row of paper, up to
    ROUNDS of them, to the first ink after the paper."""
    cut = 0
    inked = ink.mean(axis=1)  # each row's share inked, read once for every round
    for _ in range(ROUNDS):
        more = _line(ink[cut:], inked[cut:], th)
        if not more:
            break
        cut += more
    return cut


def _line(ink: np.ndarray, inked: np.ndarray, th: float) -> int:
    """Rows from the top to the ink after a line of text and the paper under it; 0 when
    the top is no such line. ``inked``: each row's share of ink."""
    rows = inked[:int(DEEP * th)]
    first = np.flatnonzero(rows > GAP)
    if not len(first):
        return 0
    paper = first[0] + np.flatnonzero(rows[first[0]:] <= GAP)
    if len(paper) and _text(ink[:paper[0]], th):
        after = np.flatnonzero(inked[paper[0]:] > GAP)
        return int(paper[0] + (after[0] if len(after) else 0))
    return _on_rule(ink, rows, th)


def _on_rule(ink: np.ndarray, rows: np.ndarray, th: float) -> int:
    """Rows from the top to the thinnest row between a line of text and the frame's rule
    it touches (a row inked RULE across, or more); 0 when there is no such line.

    Set tight on a miniature's frame, a rubric's letters reach its rule even in the
    scan, and no row of paper parts them; the thinnest row between is a valley, at most
    VALLEY of the line's darkest row (and of the row, VALLEY_INK), and that row is dense
    (LINE_INK), as print is and the print showing through from the other side is not.
    """
    rule = np.flatnonzero(rows >= RULE)
    if not len(rule) or rule[0] < 3:
        return 0
    valley = int(np.argmin(rows[:rule[0]]))
    if (valley < 2 or rows[valley] > VALLEY_INK
            or not VALLEY * rows[:valley].max() >= rows[valley]
            or rows[:valley].max() < LINE_INK):  # print showing through is paler
        return 0
    return valley if _text(ink[:valley], th) else 0


def _text(strip: np.ndarray, th: float) -> bool:
    """Whether a strip at the crop's edge is a line of text (or the part of one the edge
    leaves), by the shapes it is made of."""
    h, w = strip.shape
    rows = np.flatnonzero(strip.mean(axis=1) > GAP)
    if rows[-1] - rows[0] + 1 > LINE_H * th:
        return False
    cols = np.flatnonzero(strip.any(axis=0))
    if (cols[-1] - cols[0] + 1) < SPAN * w:
        return False
    _n, _lab, stats, _c = components.with_stats(strip.astype(np.uint8), connectivity=8)
    shapes = stats[1:][stats[1:, 4] >= 2]
    if (len(shapes) < PIECES or shapes[:, 2].max() > WIDE * w
            or shapes[:, 3].max() > LETTER_MAX * th):
        return False
    big = shapes[shapes[:, 4] >= (th / 3) ** 2]  # not specks
    if len(big) and np.median(big[:, 2]) > LETTER_W * th:
        return False
    whole = big[big[:, 1] > 0]  # the edge cuts the others short
    return len(whole) < 3 or float(np.median(whole[:, 3])) >= LETTER_H * th
