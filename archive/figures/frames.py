"""The frame line round a picture, so that what the box holds outside it (a rubric, a
caption, an initial beside it) is cut off as parts of their own.

Why frames: a miniature or a framed woodcut glued by its frame band to the text
around it is one shape; its frame's straight lines, meeting at the corners with paper
beyond them, say where the picture ends.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from archive.figures.config.proposals import PROPOSALS as C
from archive.figures.ink import PARAMS, Box, Ink, runs, tighten

# whether a box would be kept as a picture at any size: the verdict, handed in
Picture = Callable[[Box, Ink], bool]


def unframed(box: Box, ink: Ink, picture: Picture) -> list[Box]:
    """A framed picture apart from what the box holds outside its frame (``_frame``),
    each thing outside a part of its own; the box alone when it has no frame, or
    what the frame holds is no picture (``picture``: a plot's axes, a table's rules).
    The verdict is handed in, so the proposals stand below the verdicts."""
    frame = _frame(box, ink)
    if frame is None or not picture(frame, ink):  # a frame round a table, a chart
        return [box]
    outside = (tighten(b, ink.weak) for b in _around_frame(box, frame, ink.th))
    return [frame, *(b for b in outside if b is not None)]


def _frame(box: Box, ink: Ink) -> Box | None:
    """The rectangle of a frame line round a picture inside the box, when the box holds
    more than it (a rubric or a line of text glued on above or below, a caption, an
    initial beside it); None when there is no frame, or the box is the frame already.

    A frame is straight lines of ink meeting at the corners, each along ``frame_run`` of
    the box's side at least: two upright and one across at least (the box may end where the
    fourth is, or cut it off). Lines of text have no upright lines, and a woodcut's own
    long lines (a ground, a wall) have ink, not paper, beyond them (``_paper_beyond``).
    The uprights are looked for twice: the strongest line of each outer group of
    upright columns (a painted frame is a band of several), then the outermost columns.
    """
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    if min(h, w) < C.frame_least_side * ink.th:
        return None
    mask = ink.strong[y0:y1, x0:x1]
    lines = _lines_along(mask, ink.th)
    cols = np.flatnonzero(lines[1].any(axis=0))
    if len(cols) < 2 or cols[-1] - cols[0] < C.frame_run * w:
        return None
    groups = np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1)
    # the strongest of each band, the outer one of equals (a line drawn 3 px wide is a band)
    ink_in = [lines[1][:, g].sum(axis=0) for g in (groups[0], groups[-1])]
    strongest = (int(groups[0][np.argmax(ink_in[0])]),
                 int(groups[-1][len(ink_in[1]) - 1 - np.argmax(ink_in[1][::-1])]))
    outermost = (int(cols[0]), int(cols[-1]))
    for uprights in dict.fromkeys((strongest, outermost)):
        frame = _frame_at(mask, lines, uprights, ink, closed_only=uprights != outermost)
        if frame is not None:
            return x0 + frame[0], y0 + frame[1], x0 + frame[2], y0 + frame[3]
    return None


def _frame_at(mask: np.ndarray, lines: tuple[np.ndarray, np.ndarray, np.ndarray],
              uprights: tuple[int, int], ink: Ink, closed_only: bool = False) -> Box | None:
    """``_frame`` with these two columns (of the box's ``mask``) as its uprights, in the
    box's own pixels; with ``closed_only``, a frame of four lines meeting at the uprights'
    ends only (a justified text block under a miniature has straight sides of its own,
    running the uprights on to the box's edge)."""
    across, down, upright = lines
    h, w = mask.shape
    left, right = uprights
    if right - left < C.frame_run * w:
        return None
    ends = [np.flatnonzero(down[:, c]) for c in (left, right)]
    start, stop = max(int(e[0]) for e in ends), min(int(e[-1]) for e in ends)
    slack = max(C.frame_slack_least_px, int(ink.th))
    rows = np.flatnonzero(across[:, left + slack:right - slack].all(axis=1))
    top = next((int(r) for r in rows if abs(r - start) <= slack), 0 if start <= slack else None)
    bottom = next((int(r) for r in rows[::-1] if abs(r - stop) <= slack),
                  h - 1 if stop >= h - 1 - slack else None)
    # a frame less tall than a picture may be (small_h) is an initial's, or a cadel's strokes
    least = max(C.frame_run * h, PARAMS["small_h"] * ink.th)
    closed = (top is not None and bottom is not None and bottom - top >= least
              and (top in rows or bottom in rows)  # three sides of a frame at least
              and all(down[top + slack:bottom - slack, c].all() for c in (left, right)))
    if closed_only and not (closed and top in rows and bottom in rows):
        return None
    if not closed:  # an upright broken off short of its corner, or run on past it
        ends = (_frame_ends(upright[:, [left, right]], rows.tolist(), slack, least)
                or _askew_frame_ends(upright, down, (left, right), rows.tolist(), slack, least))
        if ends is None:
            return None
        top, bottom = ends
    frame = (left, top, right + 1, bottom + 1)
    cut = [side for side, deep in enumerate((left, top, w - 1 - right, h - 1 - bottom))
           if deep >= C.text_line_depth * ink.th]
    if not cut or not all(_paper_beyond(mask, frame, side, ink.th) for side in cut):
        return None
    return frame


def _frame_ends(sides: np.ndarray, rows: list[int], slack: int, least: float
                ) -> tuple[int, int] | None:
    """(top, bottom) of a frame whose two uprights are the columns of ``sides``: lines
    across (``rows``), or the box's own edge where both uprights run to it, one a line
    at least, that both uprights meet at the corners and run between along
    ``frame_upright_cover`` of it;
    of those, the pair nearest where the uprights' longest stretches of ink start and
    end (a painted frame's upright may break off short of its corner, and the text
    glued on beyond the frame makes lines across of its own)."""
    h = len(sides)
    reach = [_longest_stretch(sides[:, i]) for i in range(2)]
    tops = rows + ([0] if sides[:slack + 1].any(axis=0).all() else [])
    bottoms = rows + ([h - 1] if sides[h - 1 - slack:].any(axis=0).all() else [])
    tops = sorted(set(tops), key=lambda r: min(abs(r - a) for a, _b in reach))
    bottoms = sorted(set(bottoms), key=lambda r: min(abs(r - b) for _a, b in reach))
    cum = np.concatenate([np.zeros((1, 2)), np.cumsum(sides, axis=0)])
    cover = C.frame_upright_cover

    def corner(r: int) -> bool:
        return bool(sides[max(0, r - slack):r + slack + 1].any(axis=0).all())

    for t in (t for t in tops if corner(t)):
        for b in (b for b in bottoms if b - t >= least and corner(b)):
            if (t in rows or b in rows) and ((cum[b + 1] - cum[t]) >= cover * (b - t + 1)).all():
                return t, b
    return None


def _askew_frame_ends(upright: np.ndarray, down: np.ndarray, cols: tuple[int, int],
                      rows: list[int], slack: int, least: float) -> tuple[int, int] | None:
    """``_frame_ends`` for uprights a pixel or two askew on the scan: each upright's ink
    taken ``frame_askew_cols`` columns either side of it, and each then a long straight
    line (``down``) along ``frame_run`` of the frame at least, not a staff or a wall inside
    the picture."""
    k = C.frame_askew_cols
    band = np.stack([upright[:, max(0, c - k):c + k + 1].any(axis=1) for c in cols], axis=1)
    ends = _frame_ends(band, rows, slack, least)
    if ends is None or min(down[ends[0]:ends[1] + 1, c].mean() for c in cols) < C.frame_run:
        return None
    return ends


def _longest_stretch(flags: np.ndarray) -> tuple[int, int]:
    """(first, last) index of the longest run of True (``runs``); (0, -1) when none."""
    stretches = runs(flags, 1)
    if not stretches:
        return 0, -1
    first, end = max(stretches, key=lambda run: run[1] - run[0])
    return first, end - 1


def _paper_beyond(strong: np.ndarray, frame: Box, side: int, th: float) -> bool:
    """Whether a frame's line (side 0-3: left, top, right, bottom) is a thin line with
    paper beyond it: within a text height out from its inner edge, a row (a column) of
    the frame's length all but bare (``frame_bare``). In a woodcut's hatching, closed up,
    every row is a line, and none is bare."""
    if side in (0, 2):  # an upright: the same question of the image turned on its side
        strong, frame, side = strong.T, (frame[1], frame[0], frame[3], frame[2]), side + 1
    fx0, fy0, fx1, fy1 = frame
    reach = max(C.frame_th_least_px, round(th)) + 1
    rows = range(fy0 - 1, fy0 - reach, -1) if side == 1 else range(fy1, fy1 + reach - 1)
    cover = [strong[r, fx0:fx1].mean() for r in rows if 0 <= r < strong.shape[0]]
    return bool(cover) and min(cover) < C.frame_bare


def _lines_along(strong: np.ndarray, th: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns) of long straight lines of ink, and the uprights' ink closed over
    gaps up to ``frame_upright_close`` text heights: a line a pixel askew on the scan is
    taken with its neighbours, and a painted frame's gaps at preview scale are closed."""
    s = strong.astype(np.uint8)
    h, w = s.shape
    k = max(C.frame_th_least_px, round(th))
    d, least = C.frame_line_dilate_px, C.frame_open_least_px
    across = cv2.morphologyEx(cv2.dilate(s, np.ones((d, 1), np.uint8)), cv2.MORPH_CLOSE,
                              np.ones((1, k), np.uint8))
    across = cv2.morphologyEx(across, cv2.MORPH_OPEN,
                              np.ones((1, max(least, int(C.frame_run * w))), np.uint8))
    wide = cv2.dilate(s, np.ones((1, d), np.uint8))
    down = cv2.morphologyEx(
        cv2.morphologyEx(wide, cv2.MORPH_CLOSE, np.ones((k, 1), np.uint8)),
        cv2.MORPH_OPEN, np.ones((max(least, int(C.frame_run * h)), 1), np.uint8))
    upright = cv2.morphologyEx(wide, cv2.MORPH_CLOSE,
                               np.ones((C.frame_upright_close * k, 1), np.uint8))
    return across > 0, down > 0, upright > 0


def _around_frame(box: Box, frame: Box, th: float) -> list[Box]:
    """What a box holds outside its frame: the strips above and below it (corners
    included) and beside it, each deep enough to hold a line of text
    (``text_line_depth``)."""
    x0, y0, x1, y1 = box
    fx0, fy0, fx1, fy1 = frame
    strips = [(x0, y0, x1, fy0), (x0, fy1, x1, y1), (x0, fy0, fx0, fy1), (fx1, fy0, x1, fy1)]
    return [b for b in strips if min(b[2] - b[0], b[3] - b[1]) >= C.text_line_depth * th]
