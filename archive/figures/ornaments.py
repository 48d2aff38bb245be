"""What on a page is decoration, not a picture: head- and tailpieces, fleurons, frames,
initials (a square block or a painted ground with the text running on beside it, or a
cadel hung in the margin) and printer's devices.

Why shapes and mirrors: an ornament is cut to be repeated and to frame the text, so it
is symmetric, banded or set square into the lines; a scene is none of these.
"""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures.config.units import UNITS
from archive.figures.config.verdicts import MEASURES as C
from archive.figures.ink import PARAMS, Box, Ink, corr, runs, tighten

# the name ``proposals`` imports: a frame's outer band is inked along this share of each
# side (``framed``)
FRAMED = C.framed


def symmetry(box: Box, ink: Ink, turned: bool = True) -> tuple[float, float]:
    """Correlation of the (slightly blurred) darkness with its left-right and up-down
    mirror; ``turned``, the best of the mirror as it is and turned a little either way
    (``_mirror_corr``).

    A picture's box is asked this three or four times (is it an ornament, are its halves
    mirrors, the verdict): each page's ``Ink`` keeps the answers (``mirrors``), one for
    a box never turned (a plate, a speck) whichever way it is asked."""
    turned = turned and _turnable(box, ink)
    found = ink.mirrors.get((box, turned))
    if found is None:
        found = ink.mirrors[box, turned] = _mirror_corr(box, ink, turned)
    return found


def _turnable(box: Box, ink: Ink) -> bool:
    """Whether a box's mirror is also compared turned: more than a speck
    (``MEASURES.speck_side_px``), and no bigger than ``MEASURES.mirror_turned`` of the
    image (8 more warps of a plate cost milliseconds). Of the image, not of the page
    inside it: a cost guard must not decide a verdict, and against the page, a gutter
    shadow that moved the page's edge by 8% turned the arms of Toul (bpt6k6127905 f2)
    from an ornament into a crop."""
    x0, y0, x1, y1 = box
    h, w = ink.full
    return (min(x1 - x0, y1 - y0) > C.speck_side_px
            and (x1 - x0) * (y1 - y0) <= C.mirror_turned * h * w)


def _mirror_corr(box: Box, ink: Ink, turned: bool = True) -> tuple[float, float]:
    """``symmetry`` worked out: blurred by a ``WORK_SIDE`` pixel, so a stroke's exact place
    does not count. A scan is seldom square to the page: a shape turned by an angle has
    its mirror turned by twice that, so with ``turned`` (a ``_turnable`` box) it is also
    compared with its mirror turned by ``MEASURES.mirror_turns``, and the best is its
    symmetry."""
    d = _blurred(box, ink)
    lr, ud = d[:, ::-1], d[::-1, :]
    if not turned:
        return corr(d, lr), corr(d, ud)
    h, w = d.shape
    middle = ((w - 1) / 2, (h - 1) / 2)
    return _turned_corr(d, lr, middle), _turned_corr(d, ud, middle)


def _blurred(box: Box, ink: Ink) -> np.ndarray:
    """The box's darkness blurred by a ``WORK_SIDE`` pixel (a speck's is left as it is)."""
    x0, y0, x1, y1 = box
    d = ink.d[y0:y1, x0:x1].astype(np.float32)
    return cv2.GaussianBlur(d, (0, 0), ink.px) if min(d.shape) > C.speck_side_px else d


def _turned_corr(d: np.ndarray, mirror: np.ndarray, axis: tuple[float, float]) -> float:
    """The best correlation of ``d`` with its ``mirror`` as it is and turned by
    ``MEASURES.mirror_turns`` about ``axis`` (the mirror's centre, x and y)."""
    h, w = d.shape
    return max([corr(d, mirror)] + [
        corr(d, cv2.warpAffine(mirror, cv2.getRotationMatrix2D(axis, a, 1.0), (w, h),
                               borderMode=cv2.BORDER_REPLICATE)) for a in C.mirror_turns])


def _vignette_mirror(box: Box, ink: Ink) -> float:
    """A vignette's left-right ``symmetry``, its mirror also moved a pixel either way (its
    axis half a pixel): a box's edges fall on whole preview pixels, so a thin-lined
    tailpiece scanned a little askew sits off its box's middle, and the mirror about the
    middle misses its lines (bpt6k6258473t f37 0.75° askew: 0.41, moved 0.52). Asked by
    the vignette rule alone: moved everywhere, or by two pixels, it took pictures of
    ufal's pages for ornaments (README, small skews)."""
    best = symmetry(box, ink)[0]
    if not _turnable(box, ink):
        return best
    d = _blurred(box, ink)
    h, w = d.shape
    for dx in C.vignette_shifts:
        moved = cv2.warpAffine(d[:, ::-1].copy(), np.float32([[1, 0, dx], [0, 1, 0]]), (w, h),
                               borderMode=cv2.BORDER_REPLICATE)
        best = max(best, _turned_corr(d, moved, ((w - 1 + dx) / 2, (h - 1) / 2)))
    return best


def _inset(box: Box, share: float) -> Box:
    """The box shrunk by ``share`` of its size on every side."""
    x0, y0, x1, y1 = box
    dx, dy = int((x1 - x0) * share), int((y1 - y0) * share)
    return x0 + dx, y0 + dy, x1 - dx, y1 - dy


def small_ornament(box: Box, ink: Ink) -> str:
    """"initial", "ornament" or "" for a shape under ``PARAMS["small_h"]`` text heights
    (an initial or an unframed vignette: under ``MEASURES.vignette_h``).

    That small (under about ten lines of text), a shape is an initial when it is a square
    block (a woodcut or painted initial fills its square to every side; a figure's outline
    does not) or a solid one (half of it strong ink: a painted ground), with lines of text
    running on at its right for at least its width (a framed woodcut initial eight lines
    deep stands 16-17 text heights; no labelled picture under 22 has text running on at
    its right); and it is a fleuron, a tailpiece or a
    printer's device when it stands alone on its lines, is mirror-symmetric and no taller
    than wide (a standing figure is taller than wide). A tailpiece or a device has no
    frame, and stands a little taller: up to ``MEASURES.vignette_h`` text heights; a framed
    woodcut of that size, symmetric as it may be (a devotional image), is a picture.
    """
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    if bh >= C.vignette_h * ink.th:
        return ""
    small = bh < PARAMS["small_h"] * ink.th
    # a painted initial's pale ground can glue on the words set beside it: its own block
    # is an initial even when narrow (a tall painted letter); a standing figure has no
    # lines of text inside its box
    core = _core(box, ink) if small else box
    if _initial(box, ink) or (core != box and _initial(core, ink, narrow=C.core_narrow)):
        return "initial"
    if small and _hung(box, ink):
        return "initial"
    if not small and framed(box, ink):
        return ""
    wide = bw >= C.vignette_wide * bh
    return ("ornament" if wide and _alone(box, ink)
            and _vignette_mirror(box, ink) >= C.vignette_sym else "")


def framed(box: Box, ink: Ink) -> bool:
    """Whether a frame runs round the box, or the picture fills it (a photograph): its
    thin outer band (``MEASURES.frame_band_parts``-th of a side, 4%, and
    ``MEASURES.frame_band_min_px`` px at least) inked along ``MEASURES.framed`` of each
    side, weak ink counted. A vignette's outline touches its box here and there (a
    basket's rim, a device's cartouche: 0.46 of its least side at the most)."""
    return (_side_cover(box, ink, C.frame_band_parts, least=C.frame_band_min_px)
            >= C.framed)


def _initial(box: Box, ink: Ink, narrow: float = C.initial_narrow) -> bool:
    """A square block, or a solid one no narrower than ``narrow`` of its height, with
    lines of text running on at its right for at least its width."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    aspect = bw / max(1, bh)
    square = C.initial_square_min <= aspect <= C.initial_square_max and _blocky(box, ink)
    # a painted ground, about square (a dark standing figure is taller than wide)
    solid = (narrow <= aspect <= C.initial_solid_max
             and float(ink.strong[y0:y1, x0:x1].mean()) >= C.initial_solid_ink)
    return (square or solid) and _text_runs_on(box, ink) >= bw


def _hung(box: Box, ink: Ink) -> bool:
    """An initial hung in the margin (a cadel: a letter penned or cut in flourishes,
    neither a square block nor a solid one): it starts ``MEASURES.hung`` text heights or
    more left of the text column whose lines it begins, reaches it (ends at the column's
    first ink or in it: a flourish boxed apart from its letter ends just there), and those
    lines run on at its right. A picture set beside text starts where the column does;
    one in the margin stops short of the column."""
    x0, y0, x1, y1 = box
    left = _column_left(box, ink)
    if left is None or not x0 <= left - C.hung * ink.th <= x1 - ink.th:
        return False
    beside = ink.zone[y0:y1, x1:x1 + int(C.text_starts_within * ink.th) + 1]
    # a tall cadel spans the gaps between its lines: the zone holds them, glyphs do not
    return ((beside.size > 0 and float(beside.any(axis=1).mean()) >= C.zone_beside)
            or _text_runs_on(box, ink) >= x1 - x0)


def _column_left(box: Box, ink: Ink) -> int | None:
    """Where the lines of text just below the box (else just above it) start: the first
    ink of their rows, a low quantile (a line's first letter may be a tall capital, a
    paragraph indented), over the box's width and four times it to its right; None where
    no text is set there."""
    x0, y0, x1, y1 = box
    span = int(C.lines_looked * ink.th)
    cx0, cx1 = max(0, x0 - (x1 - x0)), min(ink.shape[1], x1 + C.look_right * (x1 - x0))
    for r0, r1 in ((y1, y1 + span), (y0 - span, y0)):
        rows = ink.strong[max(0, r0):max(0, r1), cx0:cx1]
        lit = rows.any(axis=1)
        if lit.sum() >= C.column_lines * ink.th:
            return cx0 + int(np.quantile(np.argmax(rows[lit], axis=1),
                                         C.column_left_quantile))
    return None


def _core(box: Box, ink: Ink) -> Box:
    """The solid block at a box's left when the rest of the box is words glued on: its
    run of columns ``MEASURES.core_dense`` full of ink (a painted initial's ground; lines
    of text never fill a column that much), and beyond it, glyph-sized shapes only. Else
    the box."""
    x0, y0, x1, y1 = box
    dense = ink.weak[y0:y1, x0:x1].mean(axis=0) >= C.core_dense
    lead = int(np.argmax(dense)) if dense.any() else len(dense)
    if lead > ink.th:
        return box
    run = runs(dense[lead:], 1)
    end = x0 + lead + (run[0][1] if run and run[0][0] == 0 else 0)
    if end - x0 - lead < C.core_min_w * ink.th or x1 - end < C.core_min_w * ink.th:
        return box
    rest = ink.strong[y0:y1, end:x1]
    # words, most of them apart (the first may be glued on): not a picture's own ink
    if not rest.any() or ink.glyphs[y0:y1, end:x1][rest].mean() < C.core_words:
        return box
    return tighten((x0 + lead, y0, end, y1), ink.strong) or box


def _alone(box: Box, ink: Ink) -> bool:
    """Nothing printed beside the box in its rows, up to the first blank run of
    ``MEASURES.alone_gap`` text heights either side (a vignette stands alone on its line;
    a picture set beside text or beside another picture does not). Not past it: in an
    opening, two pages in one scan, the facing page's text runs in the same rows past
    the margins and the fold."""
    x0, y0, x1, y1 = box
    gap, blank = int(ink.th) + 1, max(C.alone_gap_min_px, int(C.alone_gap * ink.th))
    rows = ink.strong[y0:y1]
    left = rows[:, :max(0, x0 - gap)][:, ::-1]  # outward from the box
    right = rows[:, x1 + gap:]
    beside = _up_to_blank(left, blank) + _up_to_blank(right, blank)
    row_ink = max(C.alone_row_ink_px, C.alone_row_ink * ink.th)
    return float((beside >= row_ink).mean()) <= C.alone_rows


def _up_to_blank(side: np.ndarray, blank: int) -> np.ndarray:
    """Per row, the ink of ``side`` (columns outward from a box) before its first run of
    ``blank`` columns with no ink in any row."""
    inked = side.any(axis=0)
    if len(inked) < blank:
        return side.sum(axis=1)
    empty = np.convolve(~inked, np.ones(blank, dtype=int), "valid") == blank
    stop = int(np.argmax(empty)) if empty.any() else side.shape[1]
    return side[:, :stop].sum(axis=1)


def _blocky(box: Box, ink: Ink) -> bool:
    """Ink near each of the four sides (within ``MEASURES.block_band_parts``-th of the box)
    along ``MEASURES.block_cover`` of that side at least."""
    return _side_cover(box, ink, C.block_band_parts) >= C.block_cover


def _side_cover(box: Box, ink: Ink, parts: int, least: int = 1) -> float:
    """The least share of a side of the box along which weak ink lies within its outer
    band (1/``parts`` of the box across, ``least`` px at least), over the four sides."""
    x0, y0, x1, y1 = box
    m = ink.weak[y0:y1, x0:x1]
    bx, by = max(least, (x1 - x0) // parts), max(least, (y1 - y0) // parts)
    sides = (m[:by].any(axis=0), m[-by:].any(axis=0), m[:, :bx].any(axis=1),
             m[:, -bx:].any(axis=1))
    return min(float(side.mean()) for side in sides)


def _text_runs_on(box: Box, ink: Ink) -> int:
    """How far (px) glyphs run on at a box's right, in ``MEASURES.runs_on_rows`` of its
    rows or more, starting within ``MEASURES.text_starts_within`` text heights of it; 0
    when no text starts there."""
    x0, y0, x1, y1 = box
    right = ink.glyphs[y0:y1, x1:min(ink.shape[1], x1 + C.look_right * (x1 - x0))]
    if not right.size:
        return 0
    cols = np.flatnonzero(right.mean(axis=0) >= C.runs_on_rows)
    near = (right[:, :int(C.text_starts_within * ink.th) + 1].any(axis=1).mean()
            >= C.runs_on_near)
    return int(cols[-1]) + 1 if near and len(cols) else 0


def ornament(box: Box, ink: Ink, turned: bool = True) -> bool:
    """Bands (head- and tailpieces), shapes symmetric both ways (fleurons, frames), flourishes.

    Risk, stated: a sparse, mirror-symmetric line drawing (an apparatus seen from the
    front) reads as a flourish; engravings are denser than the ink floor
    (``MEASURES.flourish_ink``). ``turned`` as in ``symmetry``.
    """
    bw, bh = box[2] - box[0], box[3] - box[1]
    aspect = bw / max(1, bh)
    if aspect > UNITS.band_aspect or aspect < C.band_aspect_tall:
        return True
    if frame_like(box, ink, turned):
        return True
    x0, y0, x1, y1 = box
    # a mirror-symmetric flourish of thin lines: tailpiece, vignette frame
    return (symmetry(box, ink, turned)[0] > C.flourish_sym
            and float(ink.strong[y0:y1, x0:x1].mean()) < C.flourish_ink)


def frame_like(box: Box, ink: Ink, turned: bool = True) -> bool:
    """A frame is symmetric both ways, and so is a fleuron or a cartouche (a frame that
    holds a hand's lines or arms: roughly so, and inside too); a scene is not both ways.
    ``turned`` as in ``symmetry``."""
    lr, ud = symmetry(box, ink, turned)
    return (min(lr, ud) > C.frame_sym[0]
            and min(symmetry(_inset(box, C.frame_inset), ink, turned)) > C.frame_sym[1])
