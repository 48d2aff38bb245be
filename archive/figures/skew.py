"""How far askew a page's lines run, read from its glyphs.

Why the glyphs' bottoms: set text stands on straight lines, so turned level its letters'
feet pile up on a few heights; a picture's shapes pile up nowhere. The finder reads a page
far askew turned level (``finder``), and a page a little askew has its pictures' channels
askew as much (``proposals``). The constants are ``config.extent.EXTENT``'s (``skew_*``).
"""

from __future__ import annotations

import numpy as np

from archive.figures.config.extent import EXTENT as C
from archive.figures.config.units import UNITS

# the angles looked among, -skew_most_deg to skew_most_deg by skew_step_deg (the stop
# half a step past the last, so it is in)
SKEW_ANGLES = np.arange(-C.skew_most_deg, C.skew_most_deg + C.skew_step_deg / 2,
                        C.skew_step_deg)


def skew_angle(stats: np.ndarray, th: float) -> float:
    """The angle (degrees, as ``cv2.getRotationMatrix2D`` takes it) that levels the
    page's lines: the one at which the glyphs' bottoms pile up on the fewest heights.
    ``stats``: the strong ink's components (x, y, w, h, area; row 0 the background)."""
    st = stats[1:]
    glyph = ((st[:, 3] <= UNITS.glyph_h * th) & (st[:, 3] >= C.skew_glyph_least_px)
             & (st[:, 4] >= C.skew_glyph_area_px))
    if glyph.sum() < C.skew_glyphs:
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
    return level if best >= C.skew_sure * flat else 0.0
