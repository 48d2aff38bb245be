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
is never made sharper than most pages the rules were written on.
"""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures import components

# under SOFT: 4 of 116 early pages as published, no chapbook or DTA page, 1 of 11 OCR-D
# and 10 of 229 ufal pages; the early books' 10th percentile is 0.97
SOFT, AIM = 0.8, 1.0
AMOUNTS = (0.5, 1.0, 1.5, 2.0, 3.0, 4.0)  # unsharp-mask amounts tried, least first
RADIUS = 1.0  # the unsharp mask's Gaussian, preview px
_FINE, _NEXT = 0.7, 2.0  # the two blurs whose bands are compared, preview px
_INK = 15  # levels under the page's 2-px blur that are ink
_GLYPH = 0.02  # a glyph is at most this share of the page's long side tall (8 px of 400)
_LEAST_PX = 100  # glyph pixels (dilated) to read a page's focus from
_MARGIN = 0.2  # read inside this much of each side: the text's middle, a third the work


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
    """An unsharp mask of ``RADIUS`` (grey or RGB, uint8)."""
    return cv2.addWeighted(a, 1.0 + amount, cv2.GaussianBlur(a, (0, 0), RADIUS), -amount, 0)


class _Bands:
    """A page's two finest bands on its glyphs, and what an unsharp mask adds to them.

    The mask and both bands are linear, so the page sharpened by ``a`` has bands
    ``band + a * added``: each amount is read from the same sums, with no image
    sharpened or filtered again (clipping and rounding aside)."""

    def __init__(self, grey: np.ndarray) -> None:
        h, w = grey.shape
        dy, dx = round(h * _MARGIN), round(w * _MARGIN)
        self.g = grey[dy:h - dy, dx:w - dx].astype(np.float32)
        hi, mid, near = _split(self.g)
        self.mask = _glyphs(cv2.subtract(near, self.g) > _INK, max(grey.shape))
        if self.mask is not None:  # the bands on the glyphs alone, zero elsewhere
            self.hi, self.mid = hi * self.mask, mid * self.mask
        self.added: tuple[np.ndarray, np.ndarray] | None = None

    def sharpened(self) -> None:
        hi, mid, _near = _split(self.g - cv2.GaussianBlur(self.g, (0, 0), RADIUS))
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
    fine = cv2.GaussianBlur(g, (0, 0), _FINE)
    near = cv2.GaussianBlur(g, (0, 0), _NEXT)
    return g - fine, fine - near, near


def _glyphs(ink: np.ndarray, side: int) -> np.ndarray | None:
    """Ink in glyph-sized shapes and the pixel round it (1.0, else 0.0), where their
    edges' detail lies; None where there are too few. Big shapes (a slide's letters, a
    diagram's bars) have less fine detail however sharp they are."""
    _n, labels, stats, _c = components.with_stats(ink.astype(np.uint8))
    tallest = max(2, round(_GLYPH * side))
    glyph = (stats[:, 3] >= 2) & (stats[:, 3] <= tallest)
    glyph[0] = False
    mask = cv2.dilate(glyph[labels].astype(np.uint8), np.ones((3, 3), np.uint8))
    return mask.astype(np.float32) if cv2.countNonZero(mask) >= _LEAST_PX else None
