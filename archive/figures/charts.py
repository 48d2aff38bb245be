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

# a run of this many patches makes a chart (Wolfenbüttel's bar has 6, bench/scans.py's 10)
PATCHES = 4
# flat: within a 3x3 neighbourhood no channel moves more than this many levels (JPEG's
# chroma noise moves Wolfenbüttel's green patch up to 16: at 14 its bar was seen on 6 of
# the 14 scans, at 18-26 on 13-15; a patch's edge moves 40 or more)
FLAT = 20
# a patch is a flat shape filling this share of its box, at least this many px a side
SOLID, LEAST = 0.8, 3
# patches side by side: their cross sizes within this share of each other, their offsets
# across within this share, and the step from one to the next at most this many patch
# lengths, 3 px over (the flat test eats a pixel of each edge; one patch the colour of
# the card between them, as on Wolfenbüttel's bar)
SAME_SIZE, ALIGNED, STEP = 0.25, 0.25, 1.3
# neighbours differ by this many levels in some channel: a facade's windows are one grey
DISTINCT = 18


def patch_runs(img: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The boxes (x0, y0, x1, y1, px) of every row or column of ``PATCHES`` flat
    rectangles or more in ``img`` (RGB or grey preview pixels), alike in size, unlike in
    colour."""
    colour = img if img.ndim == 3 else img[..., None]
    if min(colour.shape[:2]) < LEAST:
        return []
    spread = cv2.morphologyEx(colour, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))
    flat = cv2.inRange(spread, (0,) * colour.shape[2], (FLAT,) * colour.shape[2])
    _, _, stats, centres = cv2.connectedComponentsWithStats(flat, connectivity=4)
    x, y, w, h, a = (stats[1:, i] for i in range(5))
    solid = (np.minimum(w, h) >= LEAST) & (a >= SOLID * w * h)
    if solid.sum() < PATCHES:
        return []
    cx, cy = np.round(centres[1:][solid]).astype(np.int64).T  # flat: its centre's colour
    colours = colour[cy, cx].astype(np.int16)
    boxes = np.stack([x, y, w, h], axis=1)[solid]
    columns = _runs(boxes[:, [1, 0, 3, 2]], colours)
    return _runs(boxes, colours) + [(r[1], r[0], r[3], r[2]) for r in columns]


def _runs(boxes: np.ndarray, colours: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The boxes of the chains left to right of patches next to each other (``boxes``
    x, y, w, h with x along the row) that reach ``PATCHES``, longest first."""
    order = np.argsort(boxes[:, 0], kind="stable")
    boxes, colours = boxes[order], colours[order]
    x, y, w, h = (boxes[:, i] for i in range(4))
    chain = np.ones(len(boxes), dtype=np.int64)
    before = np.full(len(boxes), -1)
    for j in range(1, len(boxes)):
        gap = x[j] - (x[:j] + w[:j])
        fits = ((np.abs(h[j] - h[:j]) <= SAME_SIZE * h[:j])
                & (np.abs(y[j] - y[:j]) <= np.maximum(2.0, ALIGNED * h[:j]))
                & (np.abs(w[j] - w[:j]) <= 0.5 * w[:j]) & (gap >= -1)
                & (gap <= STEP * w[:j] + 3)
                & (np.abs(colours[j] - colours[:j]).max(axis=1) >= DISTINCT))
        if fits.any():
            i = int(np.flatnonzero(fits)[np.argmax(chain[:j][fits])])
            chain[j], before[j] = chain[i] + 1, i
    found, used = [], np.zeros(len(boxes), dtype=bool)
    for end in np.argsort(-chain, kind="stable"):
        if chain[end] < PATCHES:
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
