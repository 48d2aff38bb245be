"""A page's ink, measured once for every step of the figure finder (``figures``).

Why one measure: each step asks the same questions of the page (where the ink is,
how tall its text is, where the set text lies), and the answers cost more than the
steps. Ink is what lies clearly below the local paper level ("strong") or faintly
below it ("weak", a woodcut's grey sky); the scanner bed, coloured stamps and rubrics
are told apart here, and sizes everywhere are counted in the page's text height.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import cv2
import numpy as np

from archive.figures import charts, components, levels
from archive.figures.colour_ink import coloured, has_colour, rubrics, stamps, vivid
from archive.figures.config.ink import INK as C
from archive.figures.extent import WHOLE, Extent
from archive.figures.skew import skew_angle
from archive.figures.text_rhythm import glyph_mask, text_zone

WORK_SIDE = C.work_side  # ``finder`` imports it by this name
# Tuned by grouped CV in bench/figure_eval.py (see its docstring); sizes in text heights.
PARAMS = {
    "seed_h": 5.0,  # a picture seed is at least this many text heights tall...
    "seed_w": 3.0,  # ...and this wide
    "big": 0.5,  # share of a region's ink in shapes taller than 2.5 text heights
    "pad": 0.015,  # box margin, a fraction of the box side
    "small_h": 16.0,  # shorter than this, an initial or a symmetric shape is an ornament
}

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels of the analysed page


@dataclass
class Ink:
    """One page's ink, measured once and shared by every step.

    Where the text is (``glyphs``, ``zone``, ``text``) is worked out when a step first
    asks: on a page with no shape big enough to seed a picture (``picture_boxes``: most
    pages of a book or a magazine are text) no step does, and the text rhythm was the
    dearest part of measuring such a page.
    """

    d: np.ndarray  # darkness below the local paper, uint8
    t: float  # the strong-ink threshold on d
    strong: np.ndarray
    weak: np.ndarray
    labels: np.ndarray  # strong components
    stats: np.ndarray  # their x, y, w, h, area; row 0 the background
    th: float  # text height, px
    rubric: np.ndarray  # lines of coloured text (rubrics): text, whatever their rhythm
    shapes: np.ndarray  # x, y, w, h, area of the weak ink's shapes before anything was cut
    binary: bool = False  # a binarized page: pure white paper, no show-through
    stamps: list = field(default_factory=list)  # boxes of library stamps, px
    extent: Extent = Extent(WHOLE)  # the page inside the image, and what lies outside it
    origin: tuple[int, int] = (0, 0)  # where the analysed page area sits in the image
    full: tuple[int, int] = (0, 0)  # the image's height and width
    pixels: np.ndarray | None = None  # the analysed page area's preview, RGB or grey
    verdicts: dict = field(default_factory=dict)  # box -> _shape_verdict, asked twice a page
    mirrors: dict = field(default_factory=dict)  # (box, turned) -> symmetry, asked often

    @property
    def shape(self) -> tuple[int, int]:
        return self.strong.shape

    @cached_property
    def patch_runs(self) -> list[Box]:
        """Rows of colour patches: a chart's (``charts``), asked only of a page with a
        box to judge."""
        return [] if self.pixels is None else charts.patch_runs(self.pixels)

    @cached_property
    def glyphs(self) -> np.ndarray:
        """Strong ink in shapes no taller than a glyph."""
        return glyph_mask(self.labels, self.stats, self.th)

    @cached_property
    def zone(self) -> np.ndarray:
        """Where the page reads as set text (a line rhythm), rubrics included."""
        return text_zone(self.glyphs, self.th) | self.rubric

    @cached_property
    def text(self) -> np.ndarray:
        """Weak ink that is set text: in the zone and not part of a big shape, or a rubric;
        never a straight rule (``_rules``), which a line of text may touch."""
        big = cv2.dilate((self.strong & ~self.glyphs).astype(np.uint8),
                         np.ones((C.big_grow, C.big_grow), np.uint8)) > 0
        return self.weak & ~_rules(self.weak, self.th) & ((self.zone & ~big) | self.rubric)

    @cached_property
    def skew(self) -> float:
        """How far askew the page's lines run (``page_skew``), asked of a page with a box."""
        return skew_angle(self.stats, self.th)

    @cached_property
    def darkest(self) -> int:
        """The page's darkest ink: the 99.9th percentile of its darkness below the paper."""
        return _deepest(self.d)

    @property
    def px(self) -> float:
        """One pixel of the ``INK.work_side`` scale, in this page's pixels (1.0 to 2.0)."""
        return max(1.0, max(self.full) / C.work_side)


def _rules(weak: np.ndarray, th: float) -> np.ndarray:
    """Straight lines of weak ink ``INK.rule`` text heights long or more, across or down: a
    frame's rules, which a text line abutting them would cut (under uneven light a thin
    rule's strong ink breaks into specks of a glyph's size, so it is not a big shape).
    A letter is no line this long."""
    n = max(C.least_kernel, round(C.rule * th))
    m = weak.astype(np.uint8)
    down = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, n)))
    across = cv2.morphologyEx(m, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (n, 1)))
    return (down | across) > 0


def _paper(grey: np.ndarray) -> np.ndarray:
    """The local paper level: a max filter wide enough (1/24 page) to step over glyphs."""
    h, w = grey.shape
    small = cv2.resize(grey, (max(1, w // C.paper_shrink), max(1, h // C.paper_shrink)),
                       interpolation=cv2.INTER_AREA)
    k = max(C.least_kernel, (max(h, w) // C.paper_window) | 1)
    bg = cv2.blur(cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))), (k, k))
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


def darkest(grey: np.ndarray) -> int:
    """``Ink.darkest`` of a page not yet measured."""
    return _deepest(_darkness(grey))


def _deepest(d: np.ndarray) -> int:
    """The 99.9th percentile of a darkness map: the darkest ink, a few specks aside."""
    return levels.quantile(d, C.darkest_quantile)


def _darkness(grey: np.ndarray) -> np.ndarray:
    """How far each pixel lies below the local paper level, uint8."""
    return np.clip(_paper(grey).astype(np.int16) - grey, 0, 255).astype(np.uint8)


def measure(grey: np.ndarray, rgb: np.ndarray | None = None, ringed: list[Box] | None = None,
            side: int | None = None) -> Ink:
    """Darkness under the paper, Otsu-split into ink, the scan border and stamps removed
    (coloured ones found here, ``ringed`` ones by ``figures._ring_stamps``), text height, and
    where the text is. ``side``: the long side of the image the page was cut from (its
    page extent), the page's own by default."""
    ringed = ringed or []
    d = _darkness(grey)
    otsu, _ = cv2.threshold(d, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    t = float(np.clip(otsu, C.ink_floor, C.ink_ceiling))  # blank paper: no ink to split
    # a 1-bit scan resized to the preview keeps its paper exactly white: no show-through
    # or foxing, so fainter grey is still ink
    binary = float((grey == 255).mean()) > C.binary_white
    strong, weak = d > t, d > (C.weak_binary if binary else C.weak) * t
    shapes = components.with_stats(weak.astype(np.uint8), connectivity=8)
    bed = _scan_border(weak, shapes)
    strong &= ~bed
    weak &= ~bed
    labels, stats = _components(strong)
    th = _text_height(d, t, strong, stats, side or max(strong.shape))
    found, rubric = [], np.zeros_like(strong)
    if rgb is not None and has_colour(rgb, ~weak, C.pale):
        pale, ab = coloured(rgb, ~weak, C.pale)
        colour = vivid(pale, ab)
        found = stamps(pale, ab, th)
        if found:  # a stamp's ink is no one's: not the title's, not the woodcut's
            inked = np.zeros_like(strong)
            for x0, y0, x1, y1 in found:
                inked[y0:y1, x0:x1] = pale[y0:y1, x0:x1]
            inked = cv2.dilate(inked.astype(np.uint8),
                               np.ones((C.stamp_grow, C.stamp_grow), np.uint8)) > 0
            strong &= ~inked
            weak &= ~inked
            labels, stats = _components(strong)
        rubric = rubrics(colour, th)
    if ringed:  # a black stamp's ink is the print's colour: all under its ring goes
        e = C.ring_edge  # and the ring's own edge, a pixel or two beyond the fit
        for b in ringed:
            x0, y0, x1, y1 = max(0, b[0] - e), max(0, b[1] - e), b[2] + e, b[3] + e
            disc = _disc_mask(x1 - x0, y1 - y0)[:strong.shape[0] - y0, :strong.shape[1] - x0]
            strong[y0:y1, x0:x1] &= ~disc
            weak[y0:y1, x0:x1] &= ~disc
        labels, stats = _components(strong)
        found = found + ringed
    return Ink(d, t, strong, weak, labels, stats, th, rubric, shapes[2][1:], binary, found)


def _text_height(d: np.ndarray, t: float, strong: np.ndarray, stats: np.ndarray,
                 side: int) -> float:
    """The text height, read as well on the page scaled to an image of
    ``INK.text_height_side`` px when it comes from a larger one (``side``:
    ``INK.text_height_over`` times or more), and the larger of the two taken.

    Why: on a larger preview a woodcut's hatching breaks into specks of a glyph's size
    (2-5 px whatever the scale), and on an illustrated page they outnumber the letters:
    at 700 px the median fell to 0.32-0.6 of the text's height on a tenth of the early
    pages, and every rule in text heights with it. At that side the hatching runs together
    and the letters are read as the rules were written for."""
    h, w = strong.shape
    k = side / C.text_height_side
    if k < C.text_height_over:
        return text_height(stats[1:], strong.shape)
    size = (max(1, round(w / k)), max(1, round(h / k)))
    small = cv2.resize(d, size, interpolation=cv2.INTER_AREA) > t
    _labels, small_stats = _components(small)
    return max(text_height(stats[1:], strong.shape),
               text_height(small_stats[1:], small.shape) * k)


def _disc_mask(w: int, h: int) -> np.ndarray:
    """The ellipse inscribed in a w x h box."""
    yy, xx = np.ogrid[:h, :w]
    return ((xx + 0.5 - w / 2) / (w / 2)) ** 2 + ((yy + 0.5 - h / 2) / (h / 2)) ** 2 <= 1.0


def _components(strong: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _n, labels, stats, _c = components.with_stats(strong.astype(np.uint8), connectivity=8)
    return labels, stats


def _scan_border(weak: np.ndarray, shapes: tuple) -> np.ndarray:
    """Scanner bed, book edges and gutter shadow: long dark shapes that hug the image border.

    A component reaching the border (within 2% of it: a page's own edge line lies just
    inside the page extent) along a fifth of a side is the bed when most of its ink
    lies in the outer band; a full-bleed plate is not, so only its band goes. Down the
    page's sides a shadow is often shorter (the fold's at the top of a curved page: 0.197
    of the page's height on Wolfenbuttel page 9, the rule's fifth crossed or not as the
    scan's JPEG was saved), and glued the woodcut initial beside it into one box from the
    page's top: ``INK.side_shadow`` of the height is enough there when the shape lies
    almost all (``INK.border_ink``, 80%) in the side bands. Over the 579 shared pages
    ``bench.figure_eval`` reads that takes 84 shapes more: page edges and shadows, and
    three bits of print on a page's border (a map's island, a form's handwriting), none of
    which moved a verdict.
    """
    h, w = weak.shape
    n, lab, stats, _c = shapes  # components.with_stats of weak, which measure keeps
    x, y, bw, bh = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    mx, my = max(1, w // C.border_reach), max(1, h // C.border_reach)
    edge = (x < mx) | (y < my) | (x + bw > w - mx) | (y + bh > h - my)
    long = edge & ((bw >= C.border_long * w) | (bh >= C.border_long * h))
    upright = ((x < mx) | (x + bw > w - mx)) & (bh >= C.side_shadow * h)
    long[0] = upright[0] = False
    if not (long | upright).any():
        return np.zeros_like(weak)
    least, share = C.border_band_least, C.border_band
    by, bx = max(least, int(share * h)), max(least, int(share * w))
    band = np.ones_like(weak)
    band[by:h - by, bx:w - bx] = False
    sides = np.zeros_like(weak)
    sides[:, :bx] = sides[:, w - bx:] = True
    whole = ((long & (np.bincount(lab[band], minlength=n) >= C.border_ink * stats[:, 4]))
             | (upright & (np.bincount(lab[sides], minlength=n) >= C.border_ink * stats[:, 4])))
    return whole[lab] | (long[lab] & band)


def text_height(stats: np.ndarray, shape: tuple[int, int]) -> float:
    """Median height of glyph-sized shapes, read between whole pixels; a page without text
    gets 1/100 of its height (``INK.th_fallback``).

    At preview scale a glyph is 3-6 px tall, and which whole pixel its edges fall on
    moves with the scan's size: a plain median jumped a quarter between two scans of one
    page, and every rule counts in it. Each height stands for the pixel around it (4 px:
    3.5-4.5), and the median is read inside the middle one (the grouped median).
    """
    h, w = shape
    fallback = max(C.th_least, h / C.th_fallback)
    if len(stats) == 0:
        return fallback
    hs = stats[:, 3]
    ok = (hs >= C.glyph_least) & (hs <= h / C.glyph_tallest) & (stats[:, 2] <= w / C.glyph_widest)
    if ok.sum() < C.th_glyphs:
        return fallback
    v = hs[ok]
    m = float(np.median(v))
    if m != int(m):
        return max(C.th_least, m)
    below, at = int((v < m).sum()), int((v == m).sum())
    return float(max(C.th_least, m - 0.5 + (len(v) / 2 - below) / max(1, at)))


def intersection(a: Box, b: Box) -> int:
    """The area two boxes share (0 when apart)."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    return ix * iy if ix > 0 and iy > 0 else 0


def runs(flags: np.ndarray, least: int) -> list[tuple[int, int]]:
    """(start, end) of every run of True at least ``least`` long."""
    padded = np.concatenate(([False], flags, [False]))
    change = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(a), int(b)) for a, b in zip(change[::2], change[1::2], strict=True)
            if b - a >= least]


def tighten(box: Box, mask: np.ndarray) -> Box | None:
    """Trim a box to the ink inside it; None when there is none."""
    x0, y0, x1, y1 = box
    sub = mask[y0:y1, x0:x1]
    rows = np.flatnonzero(sub.any(axis=1))
    cols = np.flatnonzero(sub.any(axis=0))
    if not len(rows) or not len(cols):
        return None
    return (x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)


def within(st: np.ndarray, box: Box) -> np.ndarray:
    """Per shape (x, y, w, h, area rows): wholly inside the box."""
    x0, y0, x1, y1 = box
    return ((st[:, 0] >= x0) & (st[:, 1] >= y0) & (st[:, 0] + st[:, 2] <= x1)
            & (st[:, 1] + st[:, 3] <= y1))


def corr(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    den = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / den) if den > 0 else 0.0
