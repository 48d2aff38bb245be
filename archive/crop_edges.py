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
row between (``_on_rule``); lines set solid, with no row of paper between them (a
sharp scan of a high resolution), at their thinnest rows (``_set_solid``). The crop is
upright (as the pipeline turns it), so rubrics and captions lie above or below. A line
cut off that was wider than the picture (a heading, the first line beside an initial)
leaves paper at the crop's side, and that goes too (``_sides``: one of the 45 early
crops, IoU 0.82 -> 0.92).
"""

from __future__ import annotations

import numpy as np

from archive.figures import components
from archive.resize import crop_array, upright

Box = tuple[float, float, float, float]
Cut = tuple[int, int, int, int]  # rows off the upright crop's top, bottom; columns off its sides

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
LETTERS = 0.3  # a line set solid: shapes of a letter's size a text height of its width
COLUMN, PAD, SIDE = 0.01, 0.015, 1.0  # the sides left: see _sides
SAMPLE = 40_000  # pixels the paper's level is read from: a percentile of them all is dear


def cut_lines(crop: np.ndarray, text_height: float) -> Cut:
    """Rows of text to cut off the top and the bottom of an upright RGB (or grey) crop,
    and the columns of paper that leaves at its sides; ``text_height`` is the page's
    text height in the crop's pixels (0: unknown, no cut)."""
    h = crop.shape[0]
    if text_height < 2 or h < 3 * DEEP * text_height:
        return 0, 0, 0, 0
    step = max(1, round((crop.shape[0] * crop.shape[1] / SAMPLE) ** 0.5))
    paper = float(np.percentile(_darkest(crop[::step, ::step]), 95))
    band = min(h // 3, int(ROUNDS * DEEP * text_height) + 1)
    top = _cut(_darkest(crop[:band]) < INK * paper, text_height)
    bottom = _cut(_darkest(crop[h - band:])[::-1] < INK * paper, text_height)
    if not (top or bottom):
        return 0, 0, 0, 0
    return (top, bottom, *_sides(_darkest(crop[top:h - bottom]) < INK * paper, text_height))


def trimmed(img: np.ndarray, box: Box, turned: int, text_height: float) -> Box:
    """``box`` (fractions of the page ``img``) without the lines of text ``cut_lines``
    finds on its crop stood upright; ``text_height`` is the finder's, a fraction of the
    page's long side."""
    crop = upright(crop_array(img, box), turned)
    cut = cut_lines(crop, text_height * max(img.shape[:2]))
    return trimmed_box(box, turned, cut, (img.shape[1], img.shape[0])) if any(cut) else box


def trimmed_box(box: Box, turned: int, cut: Cut, size: tuple[int, int]) -> Box:
    """The box (fractions of a page of ``size`` px, width first) without the rows and
    columns cut off its upright crop: a crop turned a quarter clockwise has its top at
    the page's left, and its left at the page's bottom."""
    top, bottom, left, right = cut
    x0, y0, x1, y1 = box
    w, h = size
    if (turned // 90) % 4 == 1:
        return (x0 + top / w, y0 + right / h, x1 - bottom / w, y1 - left / h)
    return (x0 + left / w, y0 + top / h, x1 - right / w, y1 - bottom / h)


def _darkest(rgb: np.ndarray) -> np.ndarray:
    """Each pixel's darkest channel: black, red and blue ink are all dark in it."""
    if rgb.ndim == 2:
        return rgb
    return np.minimum(np.minimum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])  # 20x min(axis=2)


def _sides(ink: np.ndarray, th: float) -> tuple[int, int]:
    """Columns of paper to cut off the left and right of what is left of a crop once its
    lines are cut: a heading or an initial's line wider than the picture widened its box.
    A column counts as inked with ink in COLUMN of its rows (a speck, a letter's tip
    left by the cut is not); the box keeps a margin of PAD of the ink's width, as the
    finder's, and narrows only by SIDE text heights or more, so a crop whose lines were
    no wider than its picture keeps its sides."""
    cols = np.flatnonzero(ink.sum(axis=0) >= max(2, COLUMN * ink.shape[0]))
    if not len(cols):
        return 0, 0
    margin = round(PAD * (cols[-1] - cols[0] + 1))
    left = max(0, int(cols[0]) - margin)
    right = max(0, ink.shape[1] - 1 - int(cols[-1]) - margin)
    return (left if left >= SIDE * th else 0), (right if right >= SIDE * th else 0)


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
    first, paper = _paper_after(rows)
    if first < 0:
        return 0
    if paper > 0 and _text(ink[:paper], th):
        return _after(inked, paper)
    return _set_solid(ink, inked, th) or _on_rule(ink, rows, th)


def _paper_after(rows: np.ndarray) -> tuple[int, int]:
    """The first inked row and the first row of paper after it (-1 where there is none)."""
    first = np.flatnonzero(rows > GAP)
    if not len(first):
        return -1, -1
    paper = np.flatnonzero(rows[first[0]:] <= GAP)
    return int(first[0]), int(first[0] + paper[0]) if len(paper) else -1


def _thin(rows: np.ndarray, top: int, valley: int) -> bool:
    """Whether the row ``valley`` parts the line from ``top`` to it from what follows:
    inked VALLEY_INK at most, and VALLEY of the line's darkest row."""
    return rows[valley] <= VALLEY_INK and rows[valley] <= VALLEY * rows[top:valley].max()


def _after(inked: np.ndarray, paper: int) -> int:
    """Rows to the first ink after the row of paper at ``paper``."""
    after = np.flatnonzero(inked[paper:] > GAP)
    return paper + int(after[0] if len(after) else 0)


def _set_solid(ink: np.ndarray, inked: np.ndarray, th: float) -> int:
    """Rows from the top to the ink after lines of text set solid, up to ROUNDS of them,
    and the paper under them; 0 when the top is no such block.

    Set solid, lines have no row of paper between them: ascenders and descenders cross
    it, the more so in a sharp scan of a high resolution. Each line ends at the thinnest
    row within LINE_H text heights of its top, as ``_on_rule``'s valley; each must read
    as text, be dense (LINE_INK) and full of letters (LETTERS a text height of its width:
    a picture's ground or hatching parted at a thin row is neither); paper must follow
    the last.
    """
    rows = inked[:int(ROUNDS * DEEP * th)]
    first, paper = _paper_after(rows)
    if paper < 0 or paper - first <= LINE_H * th:
        return 0
    bounds = [first]
    while paper - bounds[-1] > LINE_H * th and len(bounds) <= ROUNDS:
        top = bounds[-1]
        look = rows[top + int(th):top + int(LINE_H * th) + 1]
        valley = top + int(th) + int(np.argmin(look))
        if not _thin(rows, top, valley):
            return 0
        bounds.append(valley)
    bounds.append(paper)
    if len(bounds) - 1 > ROUNDS or not all(
            rows[a:b].max() >= LINE_INK and _text(ink[a:b], th) and _lettered(ink[a:b], th)
            for a, b in zip(bounds, bounds[1:], strict=False)):
        return 0
    return _after(inked, paper)


def _lettered(strip: np.ndarray, th: float) -> bool:
    """LETTERS shapes of a letter's size (not specks) a text height of the strip's width."""
    _n, _lab, stats, _c = components.with_stats(strip.astype(np.uint8), connectivity=8)
    big = int((stats[1:, 4] >= (th / 3) ** 2).sum())
    return big >= LETTERS * strip.shape[1] / th


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
    if (valley < 2 or not _thin(rows, 0, valley)
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
