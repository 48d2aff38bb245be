"""How far askew a page's lines run, read from its glyphs.

Why the glyphs' bottoms: set text stands on straight lines, so turned level its letters'
feet pile up on a few heights; a picture's shapes pile up nowhere. The finder reads a page
far askew turned level (``figures``), and a page a little askew has its pictures' channels
askew as much (``picture_boxes``).
"""

from __future__ import annotations

import numpy as np

from archive.figures.text_rhythm import GLYPH_H

# the angle is looked for among these, from this many glyphs (a title page of big letters
# has 60-120), and taken when the glyphs' bottoms pile up this much more there than level:
# skewed text pages measured 1.24-2.2 (most over 1.37), pages whose text runs down
# (turned, too little text to tell) 1.03-1.21
SKEW_ANGLES, SKEW_GLYPHS, SKEW_SURE = np.arange(-6.0, 6.01, 0.25), 150, 1.3


def skew_angle(stats: np.ndarray, th: float) -> float:
    """The angle (degrees, as ``cv2.getRotationMatrix2D`` takes it) that levels the
    page's lines: the one at which the glyphs' bottoms pile up on the fewest heights.
    ``stats``: the strong ink's components (x, y, w, h, area; row 0 the background)."""
    st = stats[1:]
    glyph = (st[:, 3] <= GLYPH_H * th) & (st[:, 3] >= 2) & (st[:, 4] >= 4)
    if glyph.sum() < SKEW_GLYPHS:
        return 0.0
    x = st[glyph, 0] + st[glyph, 2] / 2.0
    y = (st[glyph, 1] + st[glyph, 3]).astype(np.float64)
    best, level, flat = -1.0, 0.0, 0.0
    for a in SKEW_ANGLES:
        t = np.deg2rad(a)
        heights = np.round(y * np.cos(t) - x * np.sin(t))
        piled = float((np.bincount((heights - heights.min()).astype(np.int64)) ** 2).sum())
        flat = piled if a == 0 else flat
        if piled > best:
            best, level = piled, float(a)
    return level if best >= SKEW_SURE * flat else 0.0
