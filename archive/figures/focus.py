"""A soft scan's page sharpened to the focus the finder's rules were written for.

Why: every rule reads ink at preview scale, where a glyph is 3-6 px and the paper
channel between two woodcuts one or two. A camera a little out of focus spreads the
edges into those pixels: a blur of 1 px a 1,000 px of the scan joined side-by-side
woodcuts, made the text taller and every size counted in it with it (the chapbooks'
pictures found 1.000 -> 0.910; at 2 px the early books' crops that are pictures 0.956
-> 0.840, ``python -m bench.figure_robustness --focus``).

How soft a page is: the energy of its glyphs' finest detail (the preview less a blur
of 0.7 px) against the next band (that blur less one of 2 px), read in the middle of
the page (a fifth in from each side: a third of the work, where the text is). The ratio
does not move with exposure, contrast, noise, JPEG quality or the scan's resolution (the
preview is always about the same size), and is read on glyph-sized ink only, since big
shapes (a slide's letters, a diagram's bars) have less fine detail however sharp they
are. Published pages measure 0.87-2.13 (early books, 5th-95th percentile), 1.20-2.18
(chapbooks), 1.14 and up (DTA); blurred 1 px, 0.44-1.18 and 0.52-0.89; blurred 2 px,
0.15-0.39. A page under ``SOFT`` is given the least unsharp mask of ``AMOUNTS`` that
brings it to ``AIM``, the softer end of the published pages, not their median: a page
is never made sharper than most pages the rules were written on. The constants are
``config.extent.EXTENT``'s (``focus_*``, ``soft``, ``aim``, ``amounts``,
``sharpen_radius_px``), each with where it was measured.
"""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures import components
from archive.figures.config.extent import EXTENT as C

# read by name (tests/test_soft_scans.py)
SOFT, AIM, AMOUNTS = C.soft, C.aim, C.amounts


def sharpness(grey: np.ndarray) -> float | None:
    """Fine detail against the next band on the page's glyphs; None on a page with too
    few glyphs to tell."""
    bands = _Bands(grey)
    return None if bands.mask is None else bands.ratio(0.0)


def amount(grey: np.ndarray) -> float:
    """The unsharp-mask amount that brings a page under ``SOFT`` to ``AIM``: 0 for a page
    in focus (or too few glyphs to tell), the largest of ``AMOUNTS`` where none reaches."""
    bands = _Bands(grey)
    if bands.mask is None or bands.ratio(0.0) >= SOFT:
        return 0.0
    bands.sharpened()
    return next((a for a in AMOUNTS if bands.ratio(a) >= AIM), AMOUNTS[-1])


def sharpen(a: np.ndarray, amount: float) -> np.ndarray:
    """An unsharp mask of ``sharpen_radius_px`` (grey or RGB, uint8)."""
    blur = cv2.GaussianBlur(a, (0, 0), C.sharpen_radius_px)
    return cv2.addWeighted(a, 1.0 + amount, blur, -amount, 0)


class _Bands:
    """A page's two finest bands on its glyphs, and what an unsharp mask adds to them.

    The mask and both bands are linear, so the page sharpened by ``a`` has bands
    ``band + a * added``: each amount is read from the same sums, with no image
    sharpened or filtered again (clipping and rounding aside)."""

    def __init__(self, grey: np.ndarray) -> None:
        h, w = grey.shape
        dy, dx = round(h * C.focus_margin), round(w * C.focus_margin)
        self.g = grey[dy:h - dy, dx:w - dx].astype(np.float32)
        hi, mid, near = _split(self.g)
        self.mask = _glyphs(cv2.subtract(near, self.g) > C.focus_ink, max(grey.shape))
        if self.mask is not None:  # the bands on the glyphs alone, zero elsewhere
            self.hi, self.mid = hi * self.mask, mid * self.mask
        self.added: tuple[np.ndarray, np.ndarray] | None = None

    def sharpened(self) -> None:
        hi, mid, _near = _split(self.g - cv2.GaussianBlur(self.g, (0, 0), C.sharpen_radius_px))
        self.added = (hi * self.mask, mid * self.mask)

    def ratio(self, a: float) -> float:
        """The finest band's energy against the next's, the page sharpened by ``a``."""
        if not a:
            return _energy(self.hi) / max(1e-6, _energy(self.mid))
        assert self.added is not None, "sharpened() first"
        hi, mid = self.added
        return _energy(self.hi, hi, a) / max(1e-6, _energy(self.mid, mid, a))


def _energy(band: np.ndarray, added: np.ndarray | None = None, a: float = 0.0) -> float:
    """The sum of squares of ``band + a * added``, from three dot products."""
    e = float(np.vdot(band, band))
    if added is not None:
        e += 2 * a * float(np.vdot(band, added)) + a * a * float(np.vdot(added, added))
    return e


def _split(g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The finest band, the next one, and the blur under both."""
    fine = cv2.GaussianBlur(g, (0, 0), C.focus_fine_px)
    near = cv2.GaussianBlur(g, (0, 0), C.focus_next_px)
    return g - fine, fine - near, near


def _glyphs(ink: np.ndarray, side: int) -> np.ndarray | None:
    """Ink in glyph-sized shapes and the pixel round it (1.0, else 0.0), where their
    edges' detail lies; None where there are fewer than ``focus_least_px`` pixels. Big
    shapes (a slide's letters, a diagram's bars) have less fine detail however sharp
    they are."""
    _n, labels, stats, _c = components.with_stats(ink.astype(np.uint8))
    least = C.focus_glyph_least_px
    tallest = max(least, round(C.focus_glyph * side))
    glyph = (stats[:, 3] >= least) & (stats[:, 3] <= tallest)
    glyph[0] = False
    ring = np.ones((C.focus_dilate_px, C.focus_dilate_px), np.uint8)
    mask = cv2.dilate(glyph[labels].astype(np.uint8), ring)
    return mask.astype(np.float32) if cv2.countNonZero(mask) >= C.focus_least_px else None
