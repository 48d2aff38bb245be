"""Colour charts by their colours: a row of flat rectangles of one size, each a colour.

The finder's own chart rule (``verdicts.ink_chart``) counts solid blocks of ink, which fails
where the patches touch (they merge into one shape), where pale ones (yellow, white, the
light greys) are no ink, and where no page was found, so the scanner bed is the "ink":
archive.org's target frame, or a library's shelf-mark card with its colour bar, alone.
A print has no flat area of one colour with straight sides, let alone four of one size
side by side in different colours: at the preview's scale an engraving's hatching blurs
to a tone, but never to rectangles that stop at a straight edge where the next begins.
"""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures.config.ink import INK as C


def patch_runs(img: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The boxes (x0, y0, x1, y1, px) of every row or column of ``INK.chart_patches`` flat
    rectangles or more in ``img`` (RGB or grey preview pixels), alike in size, unlike in
    colour."""
    colour = img if img.ndim == 3 else img[..., None]
    if min(colour.shape[:2]) < C.chart_least:
        return []
    window = np.ones((C.chart_window, C.chart_window), np.uint8)
    spread = cv2.morphologyEx(colour, cv2.MORPH_GRADIENT, window)
    flat = cv2.inRange(spread, (0,) * colour.shape[2], (C.chart_flat,) * colour.shape[2])
    _, _, stats, centres = cv2.connectedComponentsWithStats(flat, connectivity=4)
    x, y, w, h, a = (stats[1:, i] for i in range(5))
    solid = (np.minimum(w, h) >= C.chart_least) & (a >= C.chart_solid * w * h)
    if solid.sum() < C.chart_patches:
        return []
    cx, cy = np.round(centres[1:][solid]).astype(np.int64).T  # flat: its centre's colour
    colours = colour[cy, cx].astype(np.int16)
    boxes = np.stack([x, y, w, h], axis=1)[solid]
    columns = _runs(boxes[:, [1, 0, 3, 2]], colours)
    return _runs(boxes, colours) + [(r[1], r[0], r[3], r[2]) for r in columns]


def _runs(boxes: np.ndarray, colours: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The boxes of the chains left to right of patches next to each other (``boxes``
    x, y, w, h with x along the row) that reach ``INK.chart_patches``, longest first."""
    order = np.argsort(boxes[:, 0], kind="stable")
    boxes, colours = boxes[order], colours[order]
    x, y, w, h = (boxes[:, i] for i in range(4))
    chain = np.ones(len(boxes), dtype=np.int64)
    before = np.full(len(boxes), -1)
    same_size, aligned, aligned_least = C.chart_same_size, C.chart_aligned, C.chart_aligned_least
    same_length, overlap, distinct = C.chart_same_length, C.chart_overlap, C.chart_distinct
    step, step_over = C.chart_step, C.chart_step_over
    for j in range(1, len(boxes)):
        gap = x[j] - (x[:j] + w[:j])
        fits = ((np.abs(h[j] - h[:j]) <= same_size * h[:j])
                & (np.abs(y[j] - y[:j]) <= np.maximum(aligned_least, aligned * h[:j]))
                & (np.abs(w[j] - w[:j]) <= same_length * w[:j]) & (gap >= -overlap)
                & (gap <= step * w[:j] + step_over)
                & (np.abs(colours[j] - colours[:j]).max(axis=1) >= distinct))
        if fits.any():
            i = int(np.flatnonzero(fits)[np.argmax(chain[:j][fits])])
            chain[j], before[j] = chain[i] + 1, i
    found, used = [], np.zeros(len(boxes), dtype=bool)
    for end in np.argsort(-chain, kind="stable"):
        if chain[end] < C.chart_patches:
            break
        if used[end]:
            continue
        members = [int(end)]
        while before[members[-1]] >= 0:
            members.append(int(before[members[-1]]))
        used[members] = True
        found.append((int(x[members].min()), int(y[members].min()),
                      int((x + w)[members].max()), int((y + h)[members].max())))
    return found
