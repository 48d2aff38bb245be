"""Find the pictures on a page preview: engravings, photos, and the ornaments to leave out.

Why rules and not a model: a page filter fitted on one source promised 96% and kept 42%
of the illustrations of real 19th-century books. Every threshold here is relative to
something measured on the page itself (the text height, the paper level, the page
size), so a scan at another resolution, contrast or paper colour means the same.

How: the page inside the scan is found first (``page_extent``); nothing outside it is
a figure. Set text is found by its line rhythm (``text_rhythm``) and coloured ink
(stamps, rubrics) against the paper (``colour_ink``). Ink is what lies clearly below
the local paper level ("strong") or faintly below it ("weak", a woodcut's grey sky).
Pictures hold connected shapes many text lines tall; text never does at preview scale,
so such shapes seed regions. Seeds that touch merge,
small shapes inside a region join it (feet, a hat brim), and a region is cut along
clean paper channels (adjacent woodcuts that nearly touch). Each region is then judged:
thin rules, text blocks (most ink in glyph-sized shapes), title lettering (a row of big
glyphs), ornaments (bands, and shapes symmetric both ways: fleurons, frames) and small
regions are candidates that are not kept. The box is the ink extent, padded by a
sliver (``PARAMS["pad"]``) because a preview pixel at the edge is only partly inked.
A page with a small crop is looked at again at another scale (``second_look``), which
may take a crop back and never adds one; a page whose text runs down it (printed across
the book) is looked at turned upright (``_sideways``), one whose lines run askew is
looked at turned level (``_skew``), and a run of colour patches is a chart, never a
picture (``charts``).

Scores: kept pictures 0.6-1.0; ornaments and pictures under ``min_area`` 0.3 (worth a
curator's look); text blocks at most 0.125; rules, lettering, page-edge marks 0.05-0.1.

Measured with ``python -m bench.figure_eval`` (grouped cross-validation by chapbook on
the shared Moreno chapbooks and by book on the early printed books of ``figures/early``,
synthetic composites, library-scan composites, DTA and OCR-D text pages). The Moreno
chapbooks and the early books are the annotated pictures the rules were written on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import cv2
import numpy as np
from PIL import Image

from archive import charts, components, levels, ring_stamps, second_look
from archive.colour_ink import PALE, coloured, has_colour, rubrics, stamps, vivid
from archive.page_extent import WHOLE, Extent
from archive.page_extent import find as find_extent
from archive.text_rhythm import GLYPH_H, glyph_mask, text_zone

KINDS = ("engraving", "photo", "ornament", "stamp", "other")
# Why a candidate is not kept: a code in the data, words only where a person reads it.
REASONS = {
    "rule": "rule",
    "too_small": "too small",
    "page_edge": "page edge",
    "faint": "too faint (a stain, show-through)",
    "text_block": "text block",
    "lettering": "lettering",
    "ornament": "ornament",
    "initial": "initial",
    "stamp": "library stamp",
    "chart": "colour chart",
    "outside_page": "outside the page",
}
# Codes set after the finder, with their words beside the finder's for one lookup.
OUTCOME_REASONS = {
    "below_threshold": "score under the threshold",
    "kept_by_curator": "kept by the curator",
    "dropped_by_curator": "dropped by the curator",
}
NEVER_KEPT = frozenset({"outside_page", "stamp", "chart"})  # whatever threshold a curator sets
DEFAULT_MIN_AREA = 0.01  # of the page: smaller candidates come back "too_small"
PREVIEW_SIDE = 360  # the reader's preview is enough: 720 px measured no better
# Score bands: kept pictures 0.6-1, ornaments and pictures under min_area 0.3, text blocks
# <= 0.125, rules, lettering and specks <= 0.1. Any threshold in 0.31-0.6 gives the verdicts.
THRESHOLD = 0.5
REVIEW_FLOOR = 0.15  # the curator sees candidates from here up: not text blocks or specks
# Pixel-sized steps (merge gap, blur) are scaled to this long side: without it a
# tailpiece's thin frame fell apart into pieces on 800 px previews.
WORK_SIDE = 400
# Tuned by grouped CV in bench/figure_eval.py (see its docstring); sizes in text heights.
PARAMS = {
    "seed_h": 5.0,  # a picture seed is at least this many text heights tall...
    "seed_w": 3.0,  # ...and this wide
    "big": 0.5,  # share of a region's ink in shapes taller than 2.5 text heights
    "pad": 0.015,  # box margin, a fraction of the box side
    "small_h": 16.0,  # shorter than this, an initial or a symmetric shape is an ornament
}
# Least left-right and up-down mirror correlation of a frame or a cartouche, of its box
# and of its inner three quarters: scenes measured 0.25 at most inside on the early books
FRAME_SYM = (0.4, 0.5)
# share of a box's ink on lines of title letters that makes it lettering: pictures
# measured 0.14 at most (all shared sources, and the early pages scanned 13 other ways)
TITLE_INK = 0.4
# a colour or grey chart: this many solid blocks of one size in a row, holding this share
# of its box's ink (the library-scan composites' charts: 5-9 blocks, 0.45-0.55 of the ink)
CHART_PATCHES, CHART_INK = 4, 0.3
# or a run of colour patches (``charts``) this share of which lies in the box, or which
# covers this share of it
CHART_HELD, CHART_COVER = 0.9, 0.3
# an unframed vignette (a tailpiece, a printer's device) is an ornament up to this many
# text heights; framed, a picture (a framed devotional woodcut: 0.74 of its least side)
VIGNETTE_H, FRAMED = 20.0, 0.6
# an initial hung in the margin starts this many text heights left of its column's lines
# (bpt6k1521441j f40's cadels: about 3 at preview scale), found from the lines within
# this many text heights below it (else above), which run on beside it in this share of
# its rows (the text zone's)
HUNG, LINES_LOOKED, ZONE_BESIDE = 1.0, 8.0, 0.6
# a kept box this small (of the page's long side) may be a stamp glued to what it is inked
# over: round it the accumulator transform proposes rings too (``ring_stamps.rings``),
# stamps only where set text lies round them in this share of directions, or ink in no
# more than this share (bare paper), or title letters
STAMP_BOX, STAMP_ON_TEXT, STAMP_ALONE = 0.25, 0.25, 0.1
# a kept box this small whose rows' darkness follows the lines of the set text beside it
# (within this many text heights, in this share of its rows) this closely is text with
# a mark inked over it: stamps whose ring is not seen measured 0.82-0.90, pictures beside
# text 0.37 at most
BESIDE, LINES_BESIDE, LINES_THROUGH = 3.0, 0.3, 0.6
MIRROR_TURNS = (-3.0, -1.5, 1.5, 3.0)  # degrees: the mirror of a shape scanned 1.5° askew
MIRROR_TURNED = 0.15  # of the page: boxes bigger than this (plates) are compared unturned
FRAME_RUN = 0.6  # of a box's side: the least length of each line of a picture's frame
# a box's edge strip with no print in it is a stain when this many text heights deep
# and a tone (faint ink over this share of it: a woodcut's pale part, thin lines on
# paper, measured 1-2% of its strip, stains 10-60%)
STAIN, STAIN_TONE = 2.0, 0.05
# a page whose darkest ink (its 99.9th percentile, levels below the paper) is paler than
# this holds no print: a blank verso with the plate behind it showing through (real pages
# made versos at 10% and 15% of their print's depth, those cropped: 25-39), or a stain.
# Pages with pictures measured 113 at the least as published, and 45 washed out to 40% of
# their contrast (above this, lest a washed-out scan lose its plates)
UNPRINTED = 42
_MIN_SIDE = 16  # px: smaller previews have no readable layout
# a page whose text rhythm read down its columns covers this much more of it than read
# across its rows is turned: the early books and chapbooks upright measured 0.009 more
# at most, turned 0.03 more or over on 198 of 219 (the others hardly have text); of 360
# DTA, OCR-D and ufal pages one tiny typed sheet (167 px wide) measured 0.148
SIDEWAYS = 0.03
# a page whose lines run this many degrees askew is read turned level (the finder reads
# lines across the page); the angle is looked for among these, from this many glyphs
# (a title page of big letters has 60-120), and taken when the glyphs' bottoms pile up
# this much more there than level: skewed text pages measured 1.24-2.2 (most over 1.37),
# pages whose text runs down (turned, too little text to tell) 1.03-1.21
SKEW_LEVEL, SKEW_ANGLES, SKEW_GLYPHS, SKEW_SURE = 2.0, np.arange(-6.0, 6.01, 0.25), 150, 1.3


@dataclass(frozen=True)
class Region:
    """One candidate picture on a page; ``kept`` ones are the crops."""

    box: tuple[float, float, float, float]  # x0, y0, x1, y1, fractions of the image
    score: float  # 0..1, how sure this is a picture a curator wants
    kind: str  # one of KINDS
    kept: bool
    reason: str  # "" when kept, else why not: a code of REASONS
    turned: int = 0  # degrees clockwise that stand it upright: 90 on a page printed across


@dataclass(frozen=True)
class Finding:
    """What the finder saw on a page: the printed page's extent and every candidate."""

    page: tuple[float, float, float, float]  # the page inside the scan, fractions of the image
    regions: list[Region]


@dataclass
class _Ink:
    """One page's ink, measured once and shared by every step.

    Where the text is (``glyphs``, ``zone``, ``text``) is worked out when a step first
    asks: on a page with no shape big enough to seed a picture (``_could_seed``: most
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
    mirrors: dict = field(default_factory=dict)  # (box, turned) -> _symmetry, asked often

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
        """Weak ink that is set text: in the zone and not part of a big shape, or a rubric."""
        big = cv2.dilate((self.strong & ~self.glyphs).astype(np.uint8),
                         np.ones((3, 3), np.uint8)) > 0
        return (self.zone & self.weak & ~big) | (self.rubric & self.weak)

    @cached_property
    def darkest(self) -> int:
        """The page's darkest ink: the 99.9th percentile of its darkness below the paper."""
        return levels.quantile(self.d, 0.999)

    @property
    def px(self) -> float:
        """One pixel of the WORK_SIDE scale, in this page's pixels (1.0 to 2.0)."""
        return max(1.0, max(self.full) / WORK_SIDE)


Box = tuple[int, int, int, int]


def find(page: Image.Image, min_area: float = DEFAULT_MIN_AREA) -> Finding:
    """The page's extent and every candidate region, kept or not, in reading order (top
    to bottom, then left to right); what lies outside the page is listed, never kept.
    A page with a small crop is looked at again at another scale (``second_look``)."""
    found = _look(page, min_area)
    if not second_look.doubtful(found.regions):
        return found
    w, h = page.size
    scaled = page.resize((round(w * second_look.SCALE), round(h * second_look.SCALE)),
                         Image.Resampling.BOX)
    other = _look(scaled, min_area).regions
    return Finding(found.page, second_look.veto(found.regions, other))


def _look(page: Image.Image, min_area: float) -> Finding:
    """One look at the page: ``find`` without the second look. A page with a candidate
    (a shape many text lines tall) whose text runs down it (``_sideways``: a landscape
    plate or table printed across the book, its caption up the side; read across, its
    columns were crops, or hid its picture) is looked at turned a quarter clockwise
    instead: printers set such a page with its top at the left (the reader turns the
    book clockwise), so that turn makes it upright. One set the other way is read upside
    down, which the finder reads less well (the early books: crops that were pictures
    0.92 turned upright, 0.82 upside down; 0.55 read sideways). A page whose lines run
    ``SKEW_LEVEL`` degrees askew or more is looked at turned level (``_skew``)."""
    found = _analyse(page)
    if found is None:
        return Finding(WHOLE, [])
    ink, boxes = found
    if boxes and _sideways(ink):  # the way the page is read is settled before judging
        turned = _analyse(page.transpose(Image.Transpose.ROTATE_270))
        if turned is not None:
            return _turned_back(_judged(*turned, min_area))
    elif boxes and abs(angle := _skew(ink)) >= SKEW_LEVEL:
        turn = cv2.getRotationMatrix2D((page.width / 2, page.height / 2), angle, 1.0)
        level = _analyse(Image.fromarray(cv2.warpAffine(
            np.asarray(page), turn, page.size, flags=cv2.INTER_NEAREST,
            borderMode=cv2.BORDER_REPLICATE)))
        if level is not None:
            return _levelled_back(_judged(*level, min_area), turn, page.size)
    return _judged(ink, boxes, min_area)


def _skew(ink: _Ink) -> float:
    """The angle (degrees, as ``cv2.getRotationMatrix2D`` takes it) that levels the
    page's lines: the one at which the glyphs' bottoms pile up on the fewest heights."""
    st = ink.stats[1:]
    glyph = (st[:, 3] <= GLYPH_H * ink.th) & (st[:, 3] >= 2) & (st[:, 4] >= 4)
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


def _levelled_back(found: Finding, turn: np.ndarray, size: tuple[int, int]) -> Finding:
    """A finding on the page turned level, in the page's own frame: each box the upright
    box round its corners turned back."""
    w, h = size
    back = cv2.invertAffineTransform(turn)

    def box(b: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        corners = np.array([[b[0] * w, b[1] * h, 1], [b[2] * w, b[1] * h, 1],
                            [b[0] * w, b[3] * h, 1], [b[2] * w, b[3] * h, 1]]) @ back.T
        (x0, y0), (x1, y1) = corners.min(axis=0), corners.max(axis=0)
        return (max(0.0, x0 / w), max(0.0, y0 / h), min(1.0, x1 / w), min(1.0, y1 / h))
    regions = [replace(r, box=box(r.box)) for r in found.regions]
    return Finding(box(found.page), _reading_order(regions))


def _judged(ink: _Ink, boxes: list[Box], min_area: float) -> Finding:
    """Every candidate of an analysed page judged, with its stamps and what lies outside."""
    stamps = [Region(_padded(b, ink), 0.1, "stamp", False, "stamp") for b in ink.stamps]
    outside = [Region(b, 0.05, "other", False, "outside_page") for b in ink.extent.outside]
    regions = [_judge(b, ink, min_area) for b in boxes] + stamps + outside
    return Finding(ink.extent.page, _reading_order(regions))


def _sideways(ink: _Ink) -> bool:
    """Set text runs down the page, not across: the line rhythm read along the columns
    covers ``SIDEWAYS`` more of the page than along the rows, and twice as much.

    The finder reads lines across the page; turned, a column of text is a tall block of
    specks with no rhythm, and was a crop (the early books turned a quarter: crops that
    were pictures 1.000 -> 0.554, text pages with no crop 1.000 -> 0.760).
    """
    labels, stats = ink.labels.T, ink.stats[:, [1, 0, 3, 2, 4]]
    th = _text_height(stats[1:], labels.shape)
    down = float(text_zone(glyph_mask(labels, stats, th), th).mean())
    across = float(ink.zone.mean())
    return down - across >= SIDEWAYS and down >= 2 * across


def _turned_back(found: Finding) -> Finding:
    """A finding on the page turned a quarter clockwise, in the page's own frame; each
    region says the turn that stands it upright, so its crop is cut upright."""
    def back(b: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        return (b[1], 1.0 - b[2], b[3], 1.0 - b[0])
    regions = [replace(r, box=back(r.box), turned=90) for r in found.regions]
    return Finding(back(found.page), _reading_order(regions))


def candidates(page: Image.Image, min_area: float = DEFAULT_MIN_AREA) -> list[Region]:
    """Every candidate region of ``find``, kept or not."""
    return find(page, min_area).regions


def figures(page: Image.Image, min_area: float = DEFAULT_MIN_AREA) -> list[Region]:
    """The kept candidates: the pictures to crop."""
    return [r for r in candidates(page, min_area) if r.kept]


def _analyse(page: Image.Image) -> tuple[_Ink, list[Box]] | None:
    """The page's ink and its candidate boxes in pixels; None for a page too small to read."""
    grey = _grey(page)
    h, w = grey.shape
    if h < _MIN_SIDE or w < _MIN_SIDE:
        return None
    rgb = np.asarray(page) if page.mode == "RGB" else None
    k = max(h, w) // WORK_SIDE
    if k >= 2:  # whole-pixel reduction only: a fractional resize blurs a 1-px channel shut
        size = (max(1, w // k), max(1, h // k))
        grey = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
        rgb = None if rgb is None else cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
        h, w = grey.shape
    extent = find_extent(grey if rgb is None else rgb)
    px0, py0, px1, py1 = extent.page
    x0, y0 = int(px0 * w), int(py0 * h)
    x1, y1 = max(x0 + 1, round(px1 * w)), max(y0 + 1, round(py1 * h))
    grey, rgb = grey[y0:y1, x0:x1], None if rgb is None else rgb[y0:y1, x0:x1]
    pixels = grey if rgb is None else rgb
    ink = _measure(grey, rgb)
    ink.origin, ink.full, ink.extent, ink.pixels = (x0, y0), (h, w), extent, pixels
    boxes = _boxes(ink)
    ringed = _ring_stamps(ink, boxes)
    if ringed:  # measured again without them: a stamp glues itself to what it touches
        ink = _measure(grey, rgb, ringed)
        ink.origin, ink.full, ink.extent, ink.pixels = (x0, y0), (h, w), extent, pixels
        boxes = _boxes(ink)
    return ink, boxes


def _grey(page: Image.Image) -> np.ndarray:
    """Any PIL mode as a uint8 grey array; alpha is composited on white paper."""
    mode = page.mode
    if mode.startswith("I") or mode == "F":
        arr = np.nan_to_num(np.asarray(page, dtype=np.float64), posinf=0.0, neginf=0.0)
        hi = float(arr.max()) if arr.size else 0.0
        if mode == "F" and hi <= 1.0:
            scale = 255.0  # a float image in 0..1
        else:
            scale = 1.0 if hi <= 255 else 255.0 / (65535.0 if hi <= 65535 else hi)
        return (arr * scale).clip(0, 255).astype(np.uint8)
    if "A" in mode or mode in ("P", "1", "La"):
        rgba = page.convert("RGBA")
        page = Image.alpha_composite(Image.new("RGBA", rgba.size, (255,) * 4), rgba)
    return np.asarray(page.convert("L"), dtype=np.uint8)


def _paper(grey: np.ndarray) -> np.ndarray:
    """The local paper level: a max filter wide enough (1/24 page) to step over glyphs."""
    h, w = grey.shape
    small = cv2.resize(grey, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    k = max(3, (max(h, w) // 96) | 1)
    bg = cv2.blur(cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))), (k, k))
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


def _measure(grey: np.ndarray, rgb: np.ndarray | None = None, ringed: list[Box] | None = None
             ) -> _Ink:
    """Darkness under the paper, Otsu-split into ink, the scan border and stamps removed
    (coloured ones found here, ``ringed`` ones by ``_ring_stamps``), text height, and
    where the text is."""
    ringed = ringed or []
    d = np.clip(_paper(grey).astype(np.int16) - grey, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(d, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    t = float(np.clip(otsu, 25, 90))  # blank paper has no ink to split: keep a floor
    # a 1-bit scan resized to the preview keeps its paper exactly white: no show-through
    # or foxing, so fainter grey is still ink (a thin engraved line shrunk to a sixth)
    binary = float((grey == 255).mean()) > 0.4
    strong, weak = d > t, d > (0.3 if binary else 0.5) * t
    shapes = components.with_stats(weak.astype(np.uint8), connectivity=8)
    bed = _scan_border(weak, shapes)
    strong &= ~bed
    weak &= ~bed
    labels, stats = _components(strong)
    th = _text_height(stats[1:], strong.shape)
    found, rubric = [], np.zeros_like(strong)
    if rgb is not None and has_colour(rgb, ~weak, PALE):
        pale, ab = coloured(rgb, ~weak, PALE)
        colour = vivid(pale, ab)
        found = stamps(pale, ab, th)
        if found:  # a stamp's ink is no one's: not the title's, not the woodcut's
            inked = np.zeros_like(strong)
            for x0, y0, x1, y1 in found:
                inked[y0:y1, x0:x1] = pale[y0:y1, x0:x1]
            inked = cv2.dilate(inked.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
            strong &= ~inked
            weak &= ~inked
            labels, stats = _components(strong)
        rubric = rubrics(colour, th)
    if ringed:  # a black stamp's ink is the print's colour: all under its ring goes
        for b in ringed:  # and the ring's own edge, a pixel or two beyond the fit
            x0, y0, x1, y1 = max(0, b[0] - 2), max(0, b[1] - 2), b[2] + 2, b[3] + 2
            disc = _disc_mask(x1 - x0, y1 - y0)[:strong.shape[0] - y0, :strong.shape[1] - x0]
            strong[y0:y1, x0:x1] &= ~disc
            weak[y0:y1, x0:x1] &= ~disc
        labels, stats = _components(strong)
        found = found + ringed
    return _Ink(d, t, strong, weak, labels, stats, th, rubric, shapes[2][1:], binary, found)


def _ring_stamps(ink: _Ink, boxes: list[Box]) -> list[Box]:
    """Stamps told by their thin round ring (any ink colour, black ones too) that colour
    did not find, looked for only where a box would be kept: a stamp elsewhere is in no
    crop, and the transform is the dearest step of a page. Nor in a box framed all round
    (a plate, a photograph): whatever a stamp in it glues, the frame bounds the crop."""
    kept = [b for b in boxes if _judge(b, ink, 1e-9).kept and not _framed(b, ink)]
    if not kept:
        return []
    window = (min(b[0] for b in kept), min(b[1] for b in kept), max(b[2] for b in kept),
              max(b[3] for b in kept))
    big = ink.strong & ~ink.glyphs
    side = max(ink.shape)
    small = [b for b in kept if max(b[2] - b[0], b[3] - b[1]) <= STAMP_BOX * side]
    found = ring_stamps.rings(ink.d, ink.strong, big, ink.th, window, small,
                              lambda cx, cy, r: _inked_over(ink, cx, cy, r))
    return [b for b in found if not any(_intersection(b, f) for f in ink.stamps)]


def _inked_over(ink: _Ink, cx: float, cy: float, r: float) -> bool:
    """Whether what lies round a circle is what a library stamps over: set text (the
    text zone round it in STAMP_ON_TEXT of the directions), title letters (two or more
    within 1.75 radii of its centre) or bare paper (ink in STAMP_ALONE of them at most)."""
    if (ring_stamps.around(ink.zone, cx, cy, r) >= STAMP_ON_TEXT
            or ring_stamps.around(ink.strong, cx, cy, r) <= STAMP_ALONE):
        return True
    box = (int(cx - 2 * r), int(cy - 2 * r), int(cx + 2 * r) + 1, int(cy + 2 * r) + 1)
    letters = ink.stats[1:][_title_letters(box, ink)]
    x, y, w, h = (letters[:, k] for k in range(4))
    nearest = np.hypot(np.clip(cx, x, x + w) - cx, np.clip(cy, y, y + h) - cy)
    return int((nearest <= 1.75 * r).sum()) >= 2


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
    lies in the outer band; a full-bleed plate is not, so only its band goes.
    """
    h, w = weak.shape
    n, lab, stats, _c = shapes  # components.with_stats of weak, which _measure keeps
    x, y, bw, bh = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    mx, my = max(1, w // 50), max(1, h // 50)  # within 2% of a side: a page edge line
    edge = (x < mx) | (y < my) | (x + bw > w - mx) | (y + bh > h - my)
    long = edge & ((bw >= 0.2 * w) | (bh >= 0.2 * h))
    long[0] = False
    if not long.any():
        return np.zeros_like(weak)
    by, bx = max(2, int(0.08 * h)), max(2, int(0.08 * w))
    band = np.ones_like(weak)
    band[by:h - by, bx:w - bx] = False
    whole = long & (np.bincount(lab[band], minlength=n) >= 0.8 * stats[:, 4])
    return whole[lab] | (long[lab] & band)


def _text_height(stats: np.ndarray, shape: tuple[int, int]) -> float:
    """Median height of glyph-sized shapes, read between whole pixels; a page without text
    gets 1/100 of its height.

    At preview scale a glyph is 3-6 px tall, and which whole pixel its edges fall on
    moves with the scan's size: a plain median jumped a quarter between two scans of one
    page, and every rule counts in it. Each height stands for the pixel around it (4 px:
    3.5-4.5), and the median is read inside the middle one (the grouped median).
    """
    h, w = shape
    fallback = max(2.0, h / 100)
    if len(stats) == 0:
        return fallback
    hs = stats[:, 3]
    ok = (hs >= 2) & (hs <= h / 15) & (stats[:, 2] <= w / 5)
    if ok.sum() < 20:
        return fallback
    v = hs[ok]
    m = float(np.median(v))
    if m != int(m):
        return max(2.0, m)
    below, at = int((v < m).sum()), int((v == m).sum())
    return float(max(2.0, m - 0.5 + (len(v) / 2 - below) / max(1, at)))


def _boxes(ink: _Ink) -> list[Box]:
    """Picture seeds grown into boxes, then cut apart where clean paper divides them."""
    if not _could_seed(ink):
        return []
    th = ink.th
    stats = _weak_components(ink)
    seeds = stats[_seed_sized(stats, th)]
    seeds = seeds[~_page_frame(seeds)]
    g = max(1, round(ink.px))
    boxes = [(x, y, x + bw, y + bh) for x, y, bw, bh, _a in seeds.tolist()]
    # a band (a painted border down the page: long, and densely inked, not a thin frame
    # line) is an ornament whole: cut where the text beside it runs, its slices are not
    # pictures
    bands = [b for b, (_x, _y, bw, bh, a) in zip(boxes, seeds.tolist(), strict=True)
             if _band(b) and a >= 0.3 * bw * bh]
    boxes = _merge(boxes, g)
    boxes = _absorb(boxes, ink.stats[1:], g)
    h, w = ink.full
    out: list[Box] = []
    for b in boxes:
        speck = (b[2] - b[0]) * (b[3] - b[1]) < 0.002 * h * w  # nothing to cut or trim
        # a frame or band symmetric both ways is one ornament with whatever it holds
        # (a boxed table of contents): it is not cut where the text inside it runs
        if speck or _ornament(b, ink, turned=False):
            out.append(b)
            continue
        for part in (q for p in _parts(b, ink) for q in _unframed(p, ink)):
            # mirror halves are one ornament (a tailpiece's wings), never two pictures; the
            # mirrors as scanned, not turned (``_symmetry``): a part let whole here is not
            # trimmed of a stain nor cut along a channel, and a turn lifts two woodcuts in
            # a row, or a fleuron with its stain, over these thresholds
            whole = (_ornament(part, ink, turned=False)
                     or _symmetry(part, ink, turned=False)[0] > 0.6)
            out += [part] if whole else _split(part, ink)
    return _unslice(out, bands)


def _could_seed(ink: _Ink) -> bool:
    """Whether any shape of the page's weak ink, as first measured, is seed-sized.

    Seeds are shapes of a part of that ink (the scan border, stamps and text taken out),
    each inside one of these shapes and so no bigger: a page without one has no seed,
    and no box (a page of text: its text zone is then never worked out).
    """
    return bool(_seed_sized(ink.shapes, ink.th).any())


def _seed_sized(stats: np.ndarray, th: float) -> np.ndarray:
    """Per shape (x, y, w, h, area rows): tall and wide enough to seed a picture."""
    return (stats[:, 3] >= PARAMS["seed_h"] * th) & (stats[:, 2] >= PARAMS["seed_w"] * th)


def _page_frame(seeds: np.ndarray) -> np.ndarray:
    """Per seed: thin rules framing a page or a text block, with what it frames: sparse
    (a tenth of its box inked), holding two other seeds or more, none of which fills
    most of it. A picture's own frame line holds the picture, which fills it."""
    x, y, w, h, a = (seeds[:, i].astype(np.int64) for i in range(5))
    # mostly inside (80%): a frame cut by hand or warped on the scan is not quite straight,
    # and what it frames pokes out of its box here and there
    ix = (np.minimum(x[None, :] + w[None, :], x[:, None] + w[:, None])
          - np.maximum(x[None, :], x[:, None]))
    iy = (np.minimum(y[None, :] + h[None, :], y[:, None] + h[:, None])
          - np.maximum(y[None, :], y[:, None]))
    inside = (ix > 0) & (iy > 0) & (ix * iy >= 0.8 * (w * h)[None, :])
    np.fill_diagonal(inside, False)
    fills = inside & ((w * h)[None, :] >= 0.6 * (w * h)[:, None])
    return (a < 0.1 * w * h) & (inside.sum(axis=1) >= 2) & ~fills.any(axis=1)


def _unslice(boxes: list[Box], bands: list[Box]) -> list[Box]:
    """Each box that lies within a band, replaced by the whole band (once)."""
    out: list[Box] = []
    for b in boxes:
        whole = next((band for band in bands if _inside(b, band) >= 0.8), b)
        if whole not in out:
            out.append(whole)
    return out


def _inside(part: Box, box: Box) -> float:
    """Share of ``part``'s area inside ``box``."""
    return _intersection(part, box) / max(1, (part[2] - part[0]) * (part[3] - part[1]))


def _intersection(a: Box, b: Box) -> int:
    """The area two boxes share (0 when apart)."""
    ix = min(a[2], b[2]) - max(a[0], b[0])
    iy = min(a[3], b[3]) - max(a[1], b[1])
    return ix * iy if ix > 0 and iy > 0 else 0


def _band(box: Box) -> bool:
    """More than three times as long as wide: a border band, never a picture's shape."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    return max(bw, bh) > 3 * min(bw, bh)


def _weak_components(ink: _Ink) -> np.ndarray:
    """Stats (x, y, w, h, area) of the weak-ink shapes that hold some strong ink."""
    n, lab, stats, _c = components.with_stats((ink.weak & ~ink.text).astype(np.uint8),
                                              connectivity=8)
    keep = np.bincount(lab[ink.strong & ~ink.text], minlength=n) > 0
    keep[0] = False
    return stats[keep]


def _merge(boxes: list[Box], g: int = 1) -> list[Box]:
    """Union boxes that overlap or lie within g px of each other, until none do."""
    changed = True
    while changed:
        changed = False
        out: list[Box] = []
        for b in boxes:
            for i, o in enumerate(out):
                if b[0] - g <= o[2] and o[0] - g <= b[2] and b[1] - g <= o[3] and o[1] - g <= b[3]:
                    out[i] = (min(b[0], o[0]), min(b[1], o[1]), max(b[2], o[2]), max(b[3], o[3]))
                    changed = True
                    break
            else:
                out.append(b)
        boxes = out
    return boxes


def _absorb(boxes: list[Box], stats: np.ndarray, g: int = 1) -> list[Box]:
    """Grow each box over the small shapes that sit mostly inside it (feet, a hat's tip)."""
    if not len(stats):
        return boxes
    x, y = stats[:, 0], stats[:, 1]
    x1, y1 = x + stats[:, 2], y + stats[:, 3]
    area = stats[:, 2] * stats[:, 3]
    out = []
    for b in boxes:
        ix = np.minimum(x1, b[2] + g) - np.maximum(x, b[0] - g)
        iy = np.minimum(y1, b[3] + g) - np.maximum(y, b[1] - g)
        # small ones: a page frame's rules reach round the picture, and half of their
        # box may lie over it
        inside = (ix > 0) & (iy > 0) & (ix * iy >= 0.5 * area) & (
            area <= 0.5 * (b[2] - b[0]) * (b[3] - b[1]))
        if inside.any():
            b = (min(b[0], int(x[inside].min())), min(b[1], int(y[inside].min())),
                 max(b[2], int(x1[inside].max())), max(b[3], int(y1[inside].max())))
        out.append(b)
    return out


def _split(box: Box, ink: _Ink, depth: int = 0) -> list[Box]:
    """Cut a box along clean paper channels: adjacent woodcuts that nearly touch.

    Side-by-side cuts come first (chapbooks set two or three woodcuts in a row), then
    stacked ones; each part is split again, a few levels deep at most.
    """
    box = _trim_text(_trim_strays(_trim_stain(box, ink), ink), ink)
    x0, y0, x1, y1 = box
    # a headpiece is a row of blocks: one ornament band, however many blocks
    band = x1 - x0 > 3 * (y1 - y0) and y1 - y0 < 8 * ink.th  # a few lines deep
    for axis in (1,) if band else (0, 1):
        cuts = _channels(box, ink, axis)
        if cuts:
            parts = _pieces(box, ink.weak, axis, cuts)
            if depth >= 4 or len(parts) < 2:
                return parts or [box]
            return [q for part in parts for q in _split(part, ink, depth + 1)]
    return [box]


def _unframed(box: Box, ink: _Ink) -> list[Box]:
    """A framed picture apart from what the box holds outside its frame (``_frame``),
    each thing outside a part of its own; the box alone when it has no frame, or
    what the frame holds is no picture (a plot's axes, a table's rules)."""
    frame = _frame(box, ink)
    if frame is None or not _judge(frame, ink, 1e-9).kept:  # a frame round a table, a chart
        return [box]
    outside = (_tighten(b, ink.weak) for b in _around_frame(box, frame, ink.th))
    return [frame, *(b for b in outside if b is not None)]


def _frame(box: Box, ink: _Ink) -> Box | None:
    """The rectangle of a frame line round a picture inside the box, when the box holds
    more than it (a rubric or a line of text glued on above or below, a caption, an
    initial beside it); None when there is no frame, or the box is the frame already.

    A frame is straight lines of ink meeting at the corners, each along FRAME_RUN of the
    box's side at least: two upright and one across at least (the box may end where the
    fourth is, or cut it off). Lines of text have no upright lines, and a woodcut's own
    long lines (a ground, a wall) have ink, not paper, beyond them (``_paper_beyond``).
    The uprights are looked for twice: the strongest line of each outer group of
    upright columns (a painted frame is a band of several), then the outermost columns.
    """
    x0, y0, x1, y1 = box
    h, w = y1 - y0, x1 - x0
    if min(h, w) < 8 * ink.th:
        return None
    mask = ink.strong[y0:y1, x0:x1]
    lines = _lines_along(mask, ink.th)
    cols = np.flatnonzero(lines[1].any(axis=0))
    if len(cols) < 2 or cols[-1] - cols[0] < FRAME_RUN * w:
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
              uprights: tuple[int, int], ink: _Ink, closed_only: bool = False) -> Box | None:
    """``_frame`` with these two columns (of the box's ``mask``) as its uprights, in the
    box's own pixels; with ``closed_only``, a frame of four lines meeting at the uprights'
    ends only (a justified text block under a miniature has straight sides of its own,
    running the uprights on to the box's edge)."""
    across, down, upright = lines
    h, w = mask.shape
    left, right = uprights
    if right - left < FRAME_RUN * w:
        return None
    ends = [np.flatnonzero(down[:, c]) for c in (left, right)]
    start, stop = max(int(e[0]) for e in ends), min(int(e[-1]) for e in ends)
    slack = max(2, int(ink.th))
    rows = np.flatnonzero(across[:, left + slack:right - slack].all(axis=1))
    top = next((int(r) for r in rows if abs(r - start) <= slack), 0 if start <= slack else None)
    bottom = next((int(r) for r in rows[::-1] if abs(r - stop) <= slack),
                  h - 1 if stop >= h - 1 - slack else None)
    # a frame less tall than a picture may be (small_h) is an initial's, or a cadel's strokes
    least = max(FRAME_RUN * h, PARAMS["small_h"] * ink.th)
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
           if deep >= 1.5 * ink.th]
    if not cut or not all(_paper_beyond(mask, frame, side, ink.th) for side in cut):
        return None
    return frame


def _frame_ends(sides: np.ndarray, rows: list[int], slack: int, least: float
                ) -> tuple[int, int] | None:
    """(top, bottom) of a frame whose two uprights are the columns of ``sides``: lines
    across (``rows``), or the box's own edge where both uprights run to it, one a line
    at least, that both uprights meet at the corners and run between along 90% of it;
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

    def corner(r: int) -> bool:
        return bool(sides[max(0, r - slack):r + slack + 1].any(axis=0).all())

    for t in (t for t in tops if corner(t)):
        for b in (b for b in bottoms if b - t >= least and corner(b)):
            if (t in rows or b in rows) and ((cum[b + 1] - cum[t]) >= 0.9 * (b - t + 1)).all():
                return t, b
    return None


def _askew_frame_ends(upright: np.ndarray, down: np.ndarray, cols: tuple[int, int],
                      rows: list[int], slack: int, least: float) -> tuple[int, int] | None:
    """``_frame_ends`` for uprights a pixel or two askew on the scan: each upright's ink
    taken two columns either side of it, and each then a long straight line (``down``)
    along FRAME_RUN of the frame at least, not a staff or a wall inside the picture."""
    band = np.stack([upright[:, max(0, c - 2):c + 3].any(axis=1) for c in cols], axis=1)
    ends = _frame_ends(band, rows, slack, least)
    if ends is None or min(down[ends[0]:ends[1] + 1, c].mean() for c in cols) < FRAME_RUN:
        return None
    return ends


def _longest_stretch(flags: np.ndarray) -> tuple[int, int]:
    """(first, last) index of the longest run of True (``_runs``); (0, -1) when none."""
    runs = _runs(flags, 1)
    if not runs:
        return 0, -1
    first, end = max(runs, key=lambda run: run[1] - run[0])
    return first, end - 1


def _paper_beyond(strong: np.ndarray, frame: Box, side: int, th: float) -> bool:
    """Whether a frame's line (side 0-3: left, top, right, bottom) is a thin line with
    paper beyond it: within a text height out from its inner edge, a row (a column) of
    the frame's length all but bare. In a woodcut's hatching, closed up, every row is
    a line, and none is bare."""
    if side in (0, 2):  # an upright: the same question of the image turned on its side
        strong, frame, side = strong.T, (frame[1], frame[0], frame[3], frame[2]), side + 1
    fx0, fy0, fx1, fy1 = frame
    reach = max(3, round(th)) + 1
    rows = range(fy0 - 1, fy0 - reach, -1) if side == 1 else range(fy1, fy1 + reach - 1)
    cover = [strong[r, fx0:fx1].mean() for r in rows if 0 <= r < strong.shape[0]]
    return bool(cover) and min(cover) < 0.05


def _lines_along(strong: np.ndarray, th: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, columns) of long straight lines of ink, and the uprights' ink closed over
    gaps up to two text heights: a line a pixel askew on the scan is taken with its
    neighbours, and a painted frame's gaps at preview scale are closed."""
    s = strong.astype(np.uint8)
    h, w = s.shape
    k = max(3, round(th))
    across = cv2.morphologyEx(cv2.dilate(s, np.ones((3, 1), np.uint8)), cv2.MORPH_CLOSE,
                              np.ones((1, k), np.uint8))
    across = cv2.morphologyEx(across, cv2.MORPH_OPEN,
                              np.ones((1, max(3, int(FRAME_RUN * w))), np.uint8))
    wide = cv2.dilate(s, np.ones((1, 3), np.uint8))
    down = cv2.morphologyEx(cv2.morphologyEx(wide, cv2.MORPH_CLOSE, np.ones((k, 1), np.uint8)),
                            cv2.MORPH_OPEN, np.ones((max(3, int(FRAME_RUN * h)), 1), np.uint8))
    upright = cv2.morphologyEx(wide, cv2.MORPH_CLOSE, np.ones((2 * k, 1), np.uint8))
    return across > 0, down > 0, upright > 0


def _around_frame(box: Box, frame: Box, th: float) -> list[Box]:
    """What a box holds outside its frame: the strips above and below it (corners
    included) and beside it, each deep enough to hold a line of text."""
    x0, y0, x1, y1 = box
    fx0, fy0, fx1, fy1 = frame
    strips = [(x0, y0, x1, fy0), (x0, fy1, x1, y1), (x0, fy0, fx0, fy1), (fx1, fy0, x1, fy1)]
    return [b for b in strips if min(b[2] - b[0], b[3] - b[1]) >= 1.5 * th]


def _parts(box: Box, ink: _Ink) -> list[Box]:
    """A region cut where set text runs through it (``_cut_zone``).

    A region that reads as text as a whole (a table, a form, a page of text with its
    rules) keeps as parts only what is plainly printed picture: big shapes, densely
    inked; the rest stays in it, to be judged a text block with it.
    """
    parts = _cut_zone(box, ink)
    if len(parts) < 2 or _big_share(box, ink) >= PARAMS["big"]:
        return parts
    pictures = [p for p in parts if _big_share(p, ink) >= 0.8 and _weak_density(p, ink) >= 0.35]
    return pictures or [box]


def _weak_density(box: Box, ink: _Ink) -> float:
    x0, y0, x1, y1 = box
    return float(ink.weak[y0:y1, x0:x1].mean())


def _cut_zone(box: Box, ink: _Ink, axis: int = 1) -> list[Box]:
    """The parts of a box between bands of set text two lines deep or more, rows first.

    A woodcut set tight against its text, or an initial under it, joins the picture's
    shape; the text's rhythm tells where the picture ends. A part with no ink but text
    goes; a box that is all text stays whole, to be judged as a text block.
    """
    x0, y0, x1, y1 = box
    texty = ink.zone[y0:y1, x0:x1].mean(axis=axis) >= 0.5
    band = max(2, int(2.5 * ink.th))
    edges = _runs(texty, band)
    if not edges or sum(hi - lo for lo, hi in edges) >= 0.8 * len(texty):
        return [box] if axis == 0 else _cut_zone(box, ink, 0)
    cuts = [0, *[v for run in edges for v in run], len(texty)]  # parts between the bands
    out = []
    for lo, hi in zip(cuts[::2], cuts[1::2], strict=True):
        cell = (x0, y0 + lo, x1, y0 + hi) if axis == 1 else (x0 + lo, y0, x0 + hi, y1)
        part = _tighten(cell, ink.weak & ~ink.text) if hi > lo else None
        if part is not None and _printed(part, ink):
            out += [part] if axis == 0 else _cut_zone(part, ink, 0)
    return out or [box]


def _printed(box: Box, ink: _Ink) -> bool:
    """Some strong ink that is not text: a margin's faint shading or stain is not printed."""
    x0, y0, x1, y1 = box
    own = ink.strong[y0:y1, x0:x1] & ~ink.text[y0:y1, x0:x1]
    return int(own.sum()) >= 2 * ink.th * ink.th


def _runs(flags: np.ndarray, least: int) -> list[tuple[int, int]]:
    """(start, end) of every run of True at least ``least`` long."""
    padded = np.concatenate(([False], flags, [False]))
    change = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(a), int(b)) for a, b in zip(change[::2], change[1::2], strict=True)
            if b - a >= least]


def _trim_strays(box: Box, ink: _Ink) -> Box:
    """Drop a sliver of stray ink beyond an empty band at a box's edge (a neighbour's hat
    brim, a speck): under 5% of the box's ink, parted from it by a text height of paper."""
    gap = max(2, int(ink.th))
    for axis in (0, 1):  # rows, then columns
        x0, y0, x1, y1 = box
        prof = ink.weak[y0:y1, x0:x1].sum(axis=1 - axis)
        n = len(prof)
        if n <= 2 * gap:
            continue
        # band[i]: the gap rows from i on are all empty
        band = np.convolve(prof == 0, np.ones(gap, dtype=int), "valid") == gap
        before = np.concatenate(([0], np.cumsum(prof)))  # ink in prof[:i]
        total = float(before[-1])
        i = np.arange(len(band))
        head = band & (before[i] > 0) & (before[i] < 0.05 * total)
        tail = band & (total - before[i + gap] > 0) & (total - before[i + gap] < 0.05 * total)
        lo = int(i[head][0]) + gap if head.any() else 0
        hi = int(i[tail][-1]) if tail.any() else n
        if (lo, hi) != (0, n) and hi > lo:
            cell = (x0, y0 + lo, x1, y0 + hi) if axis == 0 else (x0 + lo, y0, x0 + hi, y1)
            box = _tighten(cell, ink.weak) or box
    return box


def _trim_stain(box: Box, ink: _Ink) -> Box:
    """Cut off a box's edge strip that holds no print: no row (column) of it with strong
    ink along 2% of the box, and the rest a stain (``_stain``) that the faint ink glued
    to a woodcut or a fleuron. Line prints only: a photograph's pale sky is tone too,
    and a box that is continuous tone without its strips (``_photo``) keeps them."""
    whole = box
    for axis in (0, 1):  # rows, then columns
        x0, y0, x1, y1 = box
        s = ink.strong[y0:y1, x0:x1]
        printed = np.flatnonzero(s.sum(axis=1 - axis) > max(2.0, 0.02 * s.shape[1 - axis]))
        if not len(printed):
            break
        n = s.shape[axis]
        keep = [int(printed[0]), int(printed[-1]) + 1]
        for i, (a, b) in enumerate(((0, keep[0]), (keep[1], n))):
            d = ink.d[y0 + a:y0 + b, x0:x1] if axis == 0 else ink.d[y0:y1, x0 + a:x0 + b]
            if not _stain(d if axis == 0 else d.T, outer_first=i == 0, ink=ink):
                keep[i] = (0, n)[i]
        if keep != [0, n]:
            cell = (x0, y0 + keep[0], x1, y0 + keep[1]) if axis == 0 else (
                x0 + keep[0], y0, x0 + keep[1], y1)
            box = _tighten(cell, ink.weak) or box
    return whole if box != whole and _photo(box, ink) else box


def _stain(strip: np.ndarray, outer_first: bool, ink: _Ink) -> bool:
    """Whether a strip of darkness (rows along the box's side, the outermost first or
    last) is a stain: STAIN text heights deep at least, even its darkest faint, a tone
    (faint ink over STAIN_TONE of it: a woodcut's pale part is thin lines on paper) and
    ragged at the box's edge (a photograph's tone runs to a straight edge there, inked
    along FRAMED of the side; a blot's does not)."""
    if len(strip) < STAIN * ink.th or np.percentile(strip, 99) >= 1.3 * ink.t:
        return False
    faint = strip > 0.5 * ink.t
    edge = faint[:max(1, round(ink.px))] if outer_first else faint[-max(1, round(ink.px)):]
    return float(faint.mean()) >= STAIN_TONE and float(edge.any(axis=0).mean()) < FRAMED


def _trim_text(box: Box, ink: _Ink) -> Box:
    """Cut a title or text line off a box's edge when show-through glued it on.

    Faint verso text can bridge the paper between a woodcut and its caption; strong ink
    cannot. A strip beyond a band free of strong ink that reads as text (a row of big
    letters, or a line or two of glyph-sized shapes) is not part of the picture.
    """
    for _ in range(4):
        cut = _text_strip(box, ink)
        if cut is None:
            return box
        box = _tighten(cut, ink.weak) or box
    return box


def _text_strip(box: Box, ink: _Ink) -> Box | None:
    """The box without a text strip at its top or bottom, or None when there is none.

    Rows only: captions and titles sit under or over pictures.
    """
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1]
    h, w = s.shape
    free = s.sum(axis=1) <= 0.01 * w
    for end in (True, False):
        rng = range(h - 1, int(0.6 * h), -1) if end else range(0, int(0.4 * h))
        prev_free = False
        for i in rng:  # from the edge inward, the inner row of each free band
            if free[i] and not prev_free:
                strip, keep = _halves(box, i, end)
                t = _tighten(strip, ink.strong)
                if t is not None and _texty(t, ink):
                    return keep
            prev_free = free[i]
    return None


def _halves(box: Box, i: int, end: bool) -> tuple[Box, Box]:
    """(the rows beyond offset i toward the edge, the rest)."""
    x0, y0, x1, y1 = box
    if end:
        return (x0, y0 + i, x1, y1), (x0, y0, x1, y0 + i)
    return (x0, y0, x1, y0 + i), (x0, y0 + i, x1, y1)


def _texty(strip: Box, ink: _Ink) -> bool:
    """A title (a row of big letters) or a line or two of text, not a slice of picture."""
    x0, y0, x1, y1 = strip
    if y1 - y0 < 1.5 * ink.th:
        return False
    if _lettering(strip, ink):
        return True
    # a set line is dense in black and made of glyphs; a pale slice of picture is neither
    line = ink.strong[y0:y1, x0:x1]
    return (y1 - y0 <= 4 * ink.th and float(line.mean()) >= 0.15
            and _big_share(strip, ink) < 0.25)


def _channels(box: Box, ink: _Ink, axis: int) -> list[int]:
    """Offsets of the channels across a box, one per run of qualifying columns (or rows).

    A channel's darkness is a small fraction of the box's median column, and little
    faint ink crosses it: a scene's pale sky is darker than that relative to its own
    picture, so it stays whole. All channels are found at once, against the same
    median, so a row of three woodcuts is judged as a row.
    """
    x0, y0, x1, y1 = box
    d = ink.d[y0:y1, x0:x1]
    dark = np.where(d >= 0.25 * ink.t, d, 0).astype(np.float32)
    length, span = (x1 - x0, y1 - y0) if axis == 0 else (y1 - y0, x1 - x0)
    # side by side, a narrow figure may sit by a wide scene; stacked parts are big
    margin = int(max(3 * ink.th, (0.15 if axis == 0 else 0.3) * length))
    if length - 2 * margin < 1:
        return []
    prof = dark.sum(axis=axis)
    rel = prof / max(1e-6, float(np.median(prof)))
    pw = ink.weak[y0:y1, x0:x1].sum(axis=axis) / span
    ok = (rel <= 0.2) & (pw <= 0.08)
    ok[:margin] = ok[length - margin:] = False
    cuts: list[int] = []
    run: list[int] = []
    for i in [*np.flatnonzero(ok).tolist(), -2]:
        if run and i != run[-1] + 1:
            cut = min(run, key=lambda j: rel[j])
            if not cuts or cut - cuts[-1] >= margin:  # parts narrower than that are no picture
                cuts.append(cut)
            run = []
        run.append(i)
    return cuts


def _pieces(box: Box, weak: np.ndarray, axis: int, cuts: list[int]) -> list[Box]:
    """The boxes between cuts, each around the shapes whose centre falls in it.

    A hat brim that overhangs the neighbour's column stays with its wearer, and the
    neighbour's box does not grow to reach it; where shapes straddle a cut so much that
    the boxes would overlap, the cut is made straight instead.
    """
    x0, y0, x1, y1 = box
    _n, _lab, stats, cent = components.with_stats(
        weak[y0:y1, x0:x1].astype(np.uint8), connectivity=8)
    stats, pos = stats[1:], (cent[1:, 0] if axis == 0 else cent[1:, 1])
    edges = [0, *[c + 1 for c in cuts], (x1 - x0) if axis == 0 else (y1 - y0)]
    out: list[Box] = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        st = stats[(pos >= lo) & (pos < hi)]
        if len(st):
            out.append((x0 + int(st[:, 0].min()), y0 + int(st[:, 1].min()),
                        x0 + int((st[:, 0] + st[:, 2]).max()),
                        y0 + int((st[:, 1] + st[:, 3]).max())))
    if len(out) == len(edges) - 1 and all(
            _overlap(a, b) <= 0.1 for a, b in zip(out, out[1:], strict=False)):
        return out
    straight = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        cell = (x0 + lo, y0, x0 + hi, y1) if axis == 0 else (x0, y0 + lo, x1, y0 + hi)
        t = _tighten(cell, weak)
        if t is not None:
            straight.append(t)
    return straight


def _overlap(a: Box, b: Box) -> float:
    """Intersection over the smaller box's area."""
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return _intersection(a, b) / max(1, small)


def _tighten(box: Box, mask: np.ndarray) -> Box | None:
    """Trim a box to the ink inside it; None when there is none."""
    x0, y0, x1, y1 = box
    sub = mask[y0:y1, x0:x1]
    rows = np.flatnonzero(sub.any(axis=1))
    cols = np.flatnonzero(sub.any(axis=0))
    if not len(rows) or not len(cols):
        return None
    return (x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)


def _big_share(box: Box, ink: _Ink) -> float:
    """Share of the box's strong ink in shapes taller than 2.5 text heights (text: ~0)."""
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1]
    n = int(s.sum())
    if not n:
        return 0.0
    tall = ink.stats[:, 3] > 2.5 * ink.th
    return float(tall[ink.labels[y0:y1, x0:x1]][s].sum() / n)


def _table(box: Box, ink: _Ink) -> bool:
    """A table or a form: rules across its whole width, three or more, and between them
    glyphs only (by their faint ink as well). A drawing's lines run every way and end
    inside it; a picture framed by rules keeps its own big shapes inside the frame."""
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1].astype(np.uint8)
    k = max(3, int(round(4 * ink.th)))
    across = cv2.morphologyEx(s, cv2.MORPH_OPEN, np.ones((1, k), np.uint8))
    rows = across.sum(axis=1) >= 0.8 * (x1 - x0)
    if len(_runs(rows, 1)) < 3:
        return False
    down = cv2.morphologyEx(s, cv2.MORPH_OPEN, np.ones((k, 1), np.uint8))
    cols = down.sum(axis=0) >= 0.8 * (y1 - y0)
    # only the rules that run the whole box go: a hatched picture's strokes stay its own
    lines = (across * rows[:, None].astype(np.uint8)) | (down * cols[None, :].astype(np.uint8))
    # the rest by its faint ink too: a painting's shades join into broad shapes, glyphs don't
    rest = ink.weak[y0:y1, x0:x1].astype(np.uint8) & ~cv2.dilate(lines, np.ones((3, 3), np.uint8))
    n = int(rest.sum())
    if not n:
        return False
    _n, _lab, stats, _c = components.with_stats(rest, connectivity=8)
    tall = stats[1:, 3] > 2.5 * ink.th
    return float(stats[1:, 4][tall].sum()) < (1 - PARAMS["big"]) * n


def _line_art(box: Box, ink: _Ink) -> bool:
    """A binarized line drawing: resized to the preview its thin lines turn grey, not black.

    Text stays black at that scale (its strokes are solid), so a region whose faint ink
    far outweighs its strong ink is drawn, not set. Only on binarized pages: on paper
    scans faint-only ink is show-through and foxing.
    """
    if not ink.binary:
        return False
    x0, y0, x1, y1 = box
    weak = int(ink.weak[y0:y1, x0:x1].sum())
    return weak > 0.1 * (x1 - x0) * (y1 - y0) and ink.strong[y0:y1, x0:x1].sum() < 0.5 * weak


def _lettering(box: Box, ink: _Ink) -> bool:
    """A row of three or more glyphs of the box's height: a title line, not a picture."""
    x0, y0, x1, y1 = box
    st = ink.stats[1:]
    h = y1 - y0
    inside = st[_within(st, box)]
    tall = inside[(inside[:, 3] >= 0.5 * h) & (inside[:, 2] <= 1.6 * inside[:, 3])]
    # three tall shapes side by side may be three small woodcuts; four rarely are
    need = 3 if h < 8 * ink.th else 4
    return len(tall) >= need and tall[:, 2].sum() >= 0.4 * (x1 - x0)


def _title_row(box: Box, ink: _Ink) -> bool:
    """Title lettering, one line or several: ``TITLE_INK`` of the box's ink on lines of
    title letters (``_title_letters``). A line's ink is its letters and whatever else sits in
    its rows no taller than it: words glued into one shape, a hyphen; not a woodcut
    initial beside it (taller than the line) or the rules of a title frame (no line's
    rows hold them), so an initial with its title is lettering too."""
    x0, y0, x1, y1 = box
    titled = _title_letters(box, ink)
    if not len(titled):
        return False
    st = ink.stats[1:]
    y, h = st[:, 1], st[:, 3]
    inside = _within(st, box)
    on = np.zeros(len(st), bool)
    for top, bottom in _lines(y[titled], h[titled]):
        slack = 0.1 * (bottom - top)
        on |= inside & (y >= top - slack) & (y + h <= bottom + slack) & (h <= bottom - top)
    return float(st[on, 4].sum()) >= TITLE_INK * float(ink.strong[y0:y1, x0:x1].sum())


def _title_letters(box: Box, ink: _Ink) -> np.ndarray:
    """The strong shapes (``stats`` rows less one) inside the box that are big
    letter-shaped glyphs (two holes at most), each with three more of its size along its
    line across the page (a title word can be cut in pieces, or glued to a stamp; its
    line tells what it is)."""
    st = ink.stats[1:]
    y, w, h, a = st[:, 1], st[:, 2], st[:, 3], st[:, 4]
    letter = (h >= 2 * ink.th) & (w >= 0.25 * h) & (w <= 1.6 * h) & (a <= 0.6 * w * h)
    inside = letter & _within(st, box)
    if not inside.any():
        return np.zeros(0, int)
    cand, others = np.flatnonzero(inside), np.flatnonzero(letter)
    ch, oh = h[cand][:, None], h[others][None, :]
    overlap = (np.minimum(y[cand][:, None] + ch, y[others][None, :] + oh)
               - np.maximum(y[cand][:, None], y[others][None, :]))
    low = np.minimum(ch, oh)
    # the same size; or the same cap line with a tail below it (a Q, a J: up to half again)
    capped = ((np.abs(y[cand][:, None] - y[others][None, :]) <= 0.15 * low)
              & (np.maximum(ch, oh) <= 1.5 * low))
    alike = ((np.abs(oh - ch) <= 0.2 * ch) | capped) & (overlap >= 0.7 * low)
    return np.array([i for i in cand[alike.sum(axis=1) >= 4] if _holes(ink, i + 1) <= 2],
                    int)


def _within(st: np.ndarray, box: Box) -> np.ndarray:
    """Per shape (x, y, w, h, area rows): wholly inside the box."""
    x0, y0, x1, y1 = box
    return ((st[:, 0] >= x0) & (st[:, 1] >= y0) & (st[:, 0] + st[:, 2] <= x1)
            & (st[:, 1] + st[:, 3] <= y1))


def _lines(tops: np.ndarray, heights: np.ndarray) -> list[tuple[int, int]]:
    """(top, bottom) rows of the lines that letters make, top to bottom: a letter that
    reaches over a third of its height above a line's bottom is on that line."""
    lines: list[list[int]] = []
    for i in np.argsort(tops, kind="stable"):
        t, b = int(tops[i]), int(tops[i] + heights[i])
        if lines and t < lines[-1][1] - heights[i] / 3:
            lines[-1][1] = max(lines[-1][1], b)
        else:
            lines.append([t, b])
    return [(t, b) for t, b in lines]


def _holes(ink: _Ink, label: int) -> int:
    """Enclosed holes of one strong shape: a letter has two at most, a figure many."""
    x, y, w, h, _a = ink.stats[label].tolist()
    inv = (ink.labels[y:y + h, x:x + w] != label).astype(np.uint8)
    n, _lab, st, _c = components.with_stats(inv, connectivity=4)
    inner = (st[1:, 0] > 0) & (st[1:, 1] > 0) & (st[1:, 0] + st[1:, 2] < w) & (
        st[1:, 1] + st[1:, 3] < h)
    return int(inner.sum())


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    den = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / den) if den > 0 else 0.0


def _symmetry(box: Box, ink: _Ink, turned: bool = True) -> tuple[float, float]:
    """Correlation of the (slightly blurred) darkness with its left-right and up-down
    mirror; ``turned``, the best of the mirror as it is and turned a little either way
    (``_mirror_corr``).

    A picture's box is asked this three or four times (is it an ornament, are its halves
    mirrors, the verdict): each page's ``_Ink`` keeps the answers (``mirrors``), one for
    a box never turned (a plate, a speck) whichever way it is asked."""
    turned = turned and _turnable(box, ink)
    found = ink.mirrors.get((box, turned))
    if found is None:
        found = ink.mirrors[box, turned] = _mirror_corr(box, ink, turned)
    return found


def _turnable(box: Box, ink: _Ink) -> bool:
    """Whether a box's mirror is also compared turned: more than a speck, and no bigger
    than ``MIRROR_TURNED`` of the page (8 more warps of a plate cost milliseconds)."""
    x0, y0, x1, y1 = box
    return (min(x1 - x0, y1 - y0) > 4
            and (x1 - x0) * (y1 - y0) <= MIRROR_TURNED * ink.shape[0] * ink.shape[1])


def _mirror_corr(box: Box, ink: _Ink, turned: bool = True) -> tuple[float, float]:
    """``_symmetry`` worked out: blurred by a WORK_SIDE pixel, so a stroke's exact place
    does not count. A scan is seldom square to the page: a shape turned by an angle has
    its mirror turned by twice that, so with ``turned`` (a ``_turnable`` box) it is also
    compared with its mirror turned by ``MIRROR_TURNS``, and the best is its symmetry."""
    x0, y0, x1, y1 = box
    d = ink.d[y0:y1, x0:x1].astype(np.float32)
    if min(d.shape) > 4:
        d = cv2.GaussianBlur(d, (0, 0), ink.px)
    lr, ud = d[:, ::-1], d[::-1, :]
    if not turned:
        return _corr(d, lr), _corr(d, ud)
    h, w = d.shape
    turns = [cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), a, 1.0) for a in MIRROR_TURNS]
    return tuple(max([_corr(d, m)] + [_corr(d, cv2.warpAffine(m, t, (w, h),
                                                              borderMode=cv2.BORDER_REPLICATE))
                                      for t in turns]) for m in (lr, ud))


def _inset(box: Box, share: float) -> Box:
    """The box shrunk by ``share`` of its size on every side."""
    x0, y0, x1, y1 = box
    dx, dy = int((x1 - x0) * share), int((y1 - y0) * share)
    return x0 + dx, y0 + dy, x1 - dx, y1 - dy


def _small_ornament(box: Box, ink: _Ink) -> str:
    """"initial", "ornament" or "" for a shape under ``PARAMS["small_h"]`` text heights
    (an initial or an unframed vignette: under ``VIGNETTE_H``).

    That small (under about ten lines of text), a shape is an initial when it is a square
    block (a woodcut or painted initial fills its square to every side; a figure's outline
    does not) or a solid one (half of it strong ink: a painted ground), with lines of text
    running on at its right for at least its width (a framed woodcut initial eight lines
    deep stands 16-17 text heights; no labelled picture under 22 has text running on at
    its right); and it is a fleuron, a tailpiece or a
    printer's device when it stands alone on its lines, is mirror-symmetric and no taller
    than wide (a standing figure is taller than wide). A tailpiece or a device has no
    frame, and stands a little taller: up to ``VIGNETTE_H`` text heights; a framed
    woodcut of that size, symmetric as it may be (a devotional image), is a picture.
    """
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    if bh >= VIGNETTE_H * ink.th:
        return ""
    small = bh < PARAMS["small_h"] * ink.th
    # a painted initial's pale ground can glue on the words set beside it: its own block
    # is an initial even when narrow (a tall painted letter); a standing figure has no
    # lines of text inside its box
    core = _core(box, ink) if small else box
    if _initial(box, ink) or (core != box and _initial(core, ink, narrow=0.5)):
        return "initial"
    if small and _hung(box, ink):
        return "initial"
    if not small and _framed(box, ink):
        return ""
    wide = bw >= 0.85 * bh
    return "ornament" if wide and _alone(box, ink) and _symmetry(box, ink)[0] >= 0.45 else ""


def _framed(box: Box, ink: _Ink) -> bool:
    """Whether a frame runs round the box, or the picture fills it (a photograph): its
    thin outer band (4% of a side, 2 px at least) inked along FRAMED of each side, weak
    ink counted. A vignette's outline touches its box here and there (a basket's rim, a
    device's cartouche: 0.46 of its least side at the most)."""
    return _side_cover(box, ink, 25, least=2) >= FRAMED


def _initial(box: Box, ink: _Ink, narrow: float = 0.7) -> bool:
    """A square block, or a solid one no narrower than ``narrow`` of its height, with
    lines of text running on at its right for at least its width."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    aspect = bw / max(1, bh)
    square = 0.8 <= aspect <= 1.3 and _blocky(box, ink)
    # a painted ground, about square (a dark standing figure is taller than wide)
    solid = narrow <= aspect <= 1.4 and float(ink.strong[y0:y1, x0:x1].mean()) >= 0.5
    return (square or solid) and _text_runs_on(box, ink) >= bw


def _hung(box: Box, ink: _Ink) -> bool:
    """An initial hung in the margin (a cadel: a letter penned or cut in flourishes,
    neither a square block nor a solid one): it starts HUNG text heights or more left of
    the text column whose lines it begins, reaches into it, and those lines run on at its
    right. A picture set beside text starts where the column does; one in the margin
    does not reach into the column."""
    x0, y0, x1, y1 = box
    left = _column_left(box, ink)
    if left is None or not x0 <= left - HUNG * ink.th < x1 - ink.th:
        return False
    beside = ink.zone[y0:y1, x1:x1 + int(4 * ink.th) + 1]
    # a tall cadel spans the gaps between its lines: the zone holds them, glyphs do not
    return ((beside.size > 0 and float(beside.any(axis=1).mean()) >= ZONE_BESIDE)
            or _text_runs_on(box, ink) >= x1 - x0)


def _column_left(box: Box, ink: _Ink) -> int | None:
    """Where the lines of text just below the box (else just above it) start: the first
    ink of their rows, a low quantile (a line's first letter may be a tall capital, a
    paragraph indented), over the box's width and four times it to its right; None where
    no text is set there."""
    x0, y0, x1, y1 = box
    span = int(LINES_LOOKED * ink.th)
    cx0, cx1 = max(0, x0 - (x1 - x0)), min(ink.shape[1], x1 + 4 * (x1 - x0))
    for r0, r1 in ((y1, y1 + span), (y0 - span, y0)):
        rows = ink.strong[max(0, r0):max(0, r1), cx0:cx1]
        lit = rows.any(axis=1)
        if lit.sum() >= 2 * ink.th:
            return cx0 + int(np.quantile(np.argmax(rows[lit], axis=1), 0.25))
    return None


def _core(box: Box, ink: _Ink) -> Box:
    """The solid block at a box's left when the rest of the box is words glued on: its
    run of columns 60% full of ink (a painted initial's ground; lines of text never
    fill a column that much), and beyond it, glyph-sized shapes only. Else the box."""
    x0, y0, x1, y1 = box
    dense = ink.weak[y0:y1, x0:x1].mean(axis=0) >= 0.6
    lead = int(np.argmax(dense)) if dense.any() else len(dense)
    if lead > ink.th:
        return box
    run = _runs(dense[lead:], 1)
    end = x0 + lead + (run[0][1] if run and run[0][0] == 0 else 0)
    if end - x0 - lead < 2 * ink.th or x1 - end < 2 * ink.th:
        return box
    rest = ink.strong[y0:y1, end:x1]
    # words, most of them apart (the first may be glued on): not a picture's own ink
    if not rest.any() or ink.glyphs[y0:y1, end:x1][rest].mean() < 0.6:
        return box
    return _tighten((x0 + lead, y0, end, y1), ink.strong) or box


def _alone(box: Box, ink: _Ink) -> bool:
    """Nothing printed beside the box in its rows (a vignette stands alone on its line;
    a picture set beside text or beside another picture does not)."""
    x0, y0, x1, y1 = box
    gap = int(ink.th) + 1
    rows = ink.strong[y0:y1]
    beside = rows[:, :max(0, x0 - gap)].sum(axis=1) + rows[:, x1 + gap:].sum(axis=1)
    return float((beside >= max(3.0, 1.5 * ink.th)).mean()) <= 0.25


def _blocky(box: Box, ink: _Ink) -> bool:
    """Ink near each of the four sides along 40% of that side at least."""
    return _side_cover(box, ink, 10) >= 0.4


def _side_cover(box: Box, ink: _Ink, parts: int, least: int = 1) -> float:
    """The least share of a side of the box along which weak ink lies within its outer
    band (1/``parts`` of the box across, ``least`` px at least), over the four sides."""
    x0, y0, x1, y1 = box
    m = ink.weak[y0:y1, x0:x1]
    bx, by = max(least, (x1 - x0) // parts), max(least, (y1 - y0) // parts)
    sides = (m[:by].any(axis=0), m[-by:].any(axis=0), m[:, :bx].any(axis=1),
             m[:, -bx:].any(axis=1))
    return min(float(side.mean()) for side in sides)


def _text_runs_on(box: Box, ink: _Ink) -> int:
    """How far (px) glyphs run on at a box's right, in a quarter of its rows or more,
    starting within four text heights of it; 0 when no text starts there."""
    x0, y0, x1, y1 = box
    right = ink.glyphs[y0:y1, x1:min(ink.shape[1], x1 + 4 * (x1 - x0))]
    if not right.size:
        return 0
    cols = np.flatnonzero(right.mean(axis=0) >= 0.25)
    near = right[:, :int(4 * ink.th) + 1].any(axis=1).mean() >= 0.5
    return int(cols[-1]) + 1 if near and len(cols) else 0


def _ornament(box: Box, ink: _Ink, turned: bool = True) -> bool:
    """Bands (head- and tailpieces), shapes symmetric both ways (fleurons, frames), flourishes.

    Risk, stated: a sparse, mirror-symmetric line drawing (an apparatus seen from the
    front) reads as a flourish; engravings are denser than the 15% ink floor. ``turned``
    as in ``_symmetry``.
    """
    bw, bh = box[2] - box[0], box[3] - box[1]
    aspect = bw / max(1, bh)
    if aspect > 3 or aspect < 0.25:
        return True
    lr, ud = _symmetry(box, ink, turned)
    # a frame is symmetric both ways, and so is a fleuron or a cartouche (a frame that
    # holds a hand's lines or arms: roughly so, and inside too); a scene is not both ways
    if (min(lr, ud) > FRAME_SYM[0]
            and min(_symmetry(_inset(box, 1 / 8), ink, turned)) > FRAME_SYM[1]):
        return True
    x0, y0, x1, y1 = box
    # a mirror-symmetric flourish of thin lines: tailpiece, vignette frame
    return lr > 0.8 and float(ink.strong[y0:y1, x0:x1].mean()) < 0.15


def _ink_chart(box: Box, ink: _Ink) -> bool:
    """A colour or grey chart photographed with the page: a row (or a column) of
    ``CHART_PATCHES`` solid blocks or more, of one size, holding a good part of the box's
    ink (``CHART_INK``).

    The page extent leaves a chart out when it finds the page; this is for when it cannot
    (a white page on a pale card). A print has no run of flat blocks: a woodcut's black
    ground is one shape with lines cut in it, and a facade's windows are a small part
    of its ink. Patches that touch, or are paler than ink, are ``_patch_run_over``'s.
    """
    x0, y0, x1, y1 = box
    x, y, w, h, a = (ink.stats[1:, i].astype(np.int64) for i in range(5))
    solid = (_within(ink.stats[1:], box) & (np.minimum(w, h) >= max(3.0, 0.5 * ink.th))
             & (a >= 0.85 * w * h))
    if solid.sum() < CHART_PATCHES:
        return False
    x, y, w, h, a = x[solid], y[solid], w[solid], h[solid], a[solid]
    ink_px = int(ink.strong[y0:y1, x0:x1].sum())
    for lead, side, other in ((y, h, w), (x, w, h)):  # a row, then a column
        for i in range(len(lead)):
            like = ((np.abs(lead - lead[i]) <= max(2.0, 0.2 * side[i]))
                    & (np.abs(side - side[i]) <= 0.25 * side[i])
                    & (np.abs(other - other[i]) <= 0.5 * other[i]))
            if like.sum() >= CHART_PATCHES and a[like].sum() >= CHART_INK * ink_px:
                return True
    return False


def _patch_run_over(box: Box, ink: _Ink) -> bool:
    """A chart's run of colour patches (``charts.patch_runs``) lies in the box (a crop
    with a chart in it is no training image, whatever else it holds), or covers
    ``CHART_COVER`` of it: a patch the colour of the card cuts the row into boxes of
    two or three patches."""
    x0, y0, x1, y1 = box
    return any(_intersection(run, box) >= min(CHART_COVER * (x1 - x0) * (y1 - y0),
                                             CHART_HELD * (run[2] - run[0]) * (run[3] - run[1]))
               for run in ink.patch_runs)


def _photo(box: Box, ink: _Ink) -> bool:
    """Continuous tone: most of the non-paper pixels are mid-greys rather than inked lines."""
    x0, y0, x1, y1 = box
    weak = int(ink.weak[y0:y1, x0:x1].sum())
    strong = int(ink.strong[y0:y1, x0:x1].sum())
    return weak > 0 and (weak - strong) / weak > 0.5


def _faint(box: Box, ink: _Ink) -> bool:
    """A stain or show-through: hardly any strong ink, and even its darkest is pale (a
    photograph's shadows go deep)."""
    x0, y0, x1, y1 = box
    if ink.binary:  # paper exactly white: no show-through or foxing to be faint with
        return False
    return (float(ink.strong[y0:y1, x0:x1].mean()) < 0.03
            and float(np.percentile(ink.d[y0:y1, x0:x1], 99)) < 1.3 * ink.t)


def _unprinted(ink: _Ink) -> bool:
    """A page with no print on it, only what shows through from the other side (a blank
    verso behind a plate: the plate mirrored, faint and blurred) or stains: its darkest
    ink is paler than any printed page's (``UNPRINTED``). Paper scanned pure white counts
    too: a scan clipped to white still shows what lies behind."""
    return ink.darkest < UNPRINTED


def _at_edge(box: Box, ink: _Ink) -> bool:
    """A narrow or a faint shape at the paper's edge: binding thread, a torn, curled or
    shadowed margin."""
    h, w = ink.shape
    x0, y0, x1, y1 = box
    side = (x0 <= 0.03 * w or x1 >= 0.97 * w) and x1 - x0 < 0.1 * w
    top = (y0 <= 0.03 * h or y1 >= 0.97 * h) and y1 - y0 < 0.1 * h
    near = x0 <= 0.03 * w or x1 >= 0.97 * w or y0 <= 0.03 * h or y1 >= 0.97 * h
    # a curled corner or a shadow: faint, thin ink; anything printed is denser
    return side or top or (near and float(ink.weak[y0:y1, x0:x1].mean()) < 0.15)


def _judge(box: Box, ink: _Ink, min_area: float) -> Region:
    """Keep a box or say why not; the cheap tests run first."""
    h, w = ink.full
    th = ink.th
    bw, bh = box[2] - box[0], box[3] - box[1]
    area = bw * bh / (w * h)

    def region(score: float, kind: str, reason: str) -> Region:
        return Region(_padded(box, ink), round(score, 3), kind, not reason, reason)

    if min(bw, bh) < 2 * th or max(bw, bh) > 8 * min(bw, bh):
        return region(0.05, "ornament", "rule")
    if area < 0.25 * min_area:
        return region(0.1, "engraving", "too_small")
    verdict = ink.verdicts.get(box)
    if verdict is None:
        verdict = ink.verdicts[box] = _shape_verdict(box, ink)
    value, kind, reason = verdict  # a score, or a picture's share of ink in big shapes
    if reason:
        return region(value, kind, reason)
    if area < min_area:
        return region(0.3, kind, "too_small")
    # sure when most ink is in large shapes and the region is well above the size floor
    shapes = min(1.0, (value - PARAMS["big"]) / 0.4)
    return region(0.6 + 0.25 * shapes + 0.15 * min(1.0, area / (5 * min_area)), kind, "")


def _shape_verdict(box: Box, ink: _Ink) -> tuple[float, str, str]:
    """What ``_judge`` says of a box whatever the size floor: (score, kind, reason) of a
    box that is not a picture, or (its big-shape share, kind, "") of one that is.

    The dearest part of a page's judging; ``_ring_stamps`` asks it of every box before
    ``find`` does, so each page's ``_Ink`` keeps the answers (``verdicts``).
    """
    if _unprinted(ink):
        return 0.1, "engraving", "faint"
    if _at_edge(box, ink):
        return 0.1, "engraving", "page_edge"
    if _ink_chart(box, ink):
        return 0.05, "other", "chart"
    big = _big_share(box, ink)
    if big < PARAMS["big"] and not _line_art(box, ink):
        return 0.25 * big, "engraving", "text_block"
    if _table(box, ink):
        return 0.1, "engraving", "text_block"
    big = max(big, PARAMS["big"])
    if (box[3] - box[1] < 10 * ink.th and _lettering(box, ink)) or _title_row(box, ink):
        return 0.1, "engraving", "lettering"
    if _patch_run_over(box, ink):  # dearer than the ink's blocks: asked of fewer boxes
        return 0.05, "other", "chart"
    if _ornament(box, ink):
        return 0.3, "ornament", "ornament"
    small = _small_ornament(box, ink)
    if small:
        return 0.3, "ornament", small
    kind = "photo" if _photo(box, ink) else "engraving"
    if kind == "photo" and _faint(box, ink):
        return 0.1, kind, "faint"
    if _marked_text(box, ink):
        return 0.1, "engraving", "text_block"
    return big, kind, ""


def _marked_text(box: Box, ink: _Ink) -> bool:
    """Set text, whatever is inked over it (a stamp whose ring is not seen: grey, worn,
    or a black stamp's emblem): the lines beside the box run on through it, so its rows'
    darkness rises and falls with theirs (``LINES_THROUGH``). A picture breaks the lines
    it is set among, and its rows follow its own drawing."""
    x0, y0, x1, y1 = box
    h, w = ink.shape
    if max(x1 - x0, y1 - y0) > STAMP_BOX * max(h, w):
        return False
    beside = max(2, int(BESIDE * ink.th))
    strips = [(max(0, x0 - beside), x0), (x1, min(w, x1 + beside))]
    strips = [(a, b) for a, b in strips if b > a]
    if not strips or max(float(ink.zone[y0:y1, a:b].any(axis=1).mean())
                         for a, b in strips) < LINES_BESIDE:
        return False
    lines = sum(ink.glyphs[y0:y1, a:b].mean(axis=1) for a, b in strips)
    rows = ink.d[y0:y1, x0:x1].mean(axis=1, dtype=np.float32)
    return _corr(rows, lines) >= LINES_THROUGH


def _padded(box: Box, ink: _Ink) -> tuple[float, float, float, float]:
    """The box as fractions of the image, grown by PARAMS["pad"] of its size on each side."""
    h, w = ink.full
    ox, oy = ink.origin
    x0, y0, x1, y1 = box[0] + ox, box[1] + oy, box[2] + ox, box[3] + oy
    px, py = PARAMS["pad"] * (x1 - x0), PARAMS["pad"] * (y1 - y0)
    return (max(0.0, (x0 - px) / w), max(0.0, (y0 - py) / h),
            min(1.0, (x1 + px) / w), min(1.0, (y1 + py) / h))


def reason_words(code: str) -> str:
    """The words for a reason code (a code this version does not know reads as itself)."""
    return REASONS.get(code) or OUTCOME_REASONS.get(code, code)


def _reading_order(regions: list[Region]) -> list[Region]:
    """Rows of regions whose vertical spans overlap, top row first, each row left to right."""
    rows: list[list[Region]] = []
    for r in sorted(regions, key=lambda r: (r.box[1], r.box[0])):
        for row in rows:
            top, bottom = min(q.box[1] for q in row), max(q.box[3] for q in row)
            overlap = min(bottom, r.box[3]) - max(top, r.box[1])
            if overlap > 0.5 * min(bottom - top, r.box[3] - r.box[1]):
                row.append(r)
                break
        else:
            rows.append([r])
    return [r for row in rows for r in sorted(row, key=lambda r: r.box[0])]
