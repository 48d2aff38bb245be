"""Find the pictures on a page preview: engravings, photos, and the ornaments to leave out.

Why rules and not a model: a page filter fitted on one source promised 96% and kept 42%
of the illustrations of real 19th-century books. Every threshold here is relative to
something measured on the page itself (the text height, the paper level, the page
size), so a scan at another resolution, contrast or paper colour means the same.

How, one module a step: the page inside the scan is found first (``page_extent``);
nothing outside it is a figure. ``page_ink`` measures the page's ink once: what lies
clearly below the local paper level ("strong") or faintly below it ("weak", a woodcut's
grey sky), the text height, set text by its line rhythm (``text_rhythm``), and coloured
ink (stamps, rubrics) against the paper (``colour_ink``). Pictures hold connected shapes
many text lines tall; text never does at preview scale, so ``picture_boxes`` grows such
shapes into boxes: seeds that touch merge, small shapes inside a box join it (feet, a
hat brim), and a box is cut where set text runs through it, at its frame line
(``picture_frames``) and along clean paper channels (adjacent woodcuts that nearly
touch). ``verdicts`` judges each box: thin rules, text blocks (most ink in glyph-sized
shapes), title lettering (a row of big glyphs), charts (``charts``), ornaments and
initials (``ornaments``: bands, shapes symmetric both ways, blocks set into the lines)
and small regions are candidates that are not kept. The box is the ink extent, padded
by a sliver (``PARAMS["pad"]``) because a preview pixel at the edge is only partly inked.
This module settles how the page is read before any of that: a soft scan (a camera a
little out of focus) is sharpened to the focus of the pages the rules were written on
(``focus``); a page whose text runs
down it (printed across the book) is read turned upright (``_sideways``), one whose
lines run askew is read turned level (``_skew``); a box that a library stamp glues to
the print is measured again without it (``_ring_stamps``); and a page with a small crop
is looked at again at another scale (``second_look``), which may take a crop back and
never adds one. A page small in its scan (a small book on a copy stand's bed) is read
again from a finer decode of its own area (``closer``), at the size the rules were
written for.

Scores: kept pictures 0.6-1.0; ornaments and pictures under ``min_area`` 0.3 (worth a
curator's look); text blocks at most 0.125; rules, lettering, page-edge marks 0.05-0.1.

Measured with ``python -m bench.figure_eval`` (grouped cross-validation by chapbook on
the shared Moreno chapbooks and by book on the early printed books of ``figures/early``,
synthetic composites, library-scan composites, DTA and OCR-D text pages). The Moreno
chapbooks and the early books are the annotated pictures the rules were written on.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import cv2
import numpy as np
from PIL import Image

from archive.figures import focus, ring_stamps, second_look
from archive.figures.config.finder import LOOK as C
from archive.figures.config.ink import INK
from archive.figures.config.units import UNITS
from archive.figures.config.verdicts import MEASURES
from archive.figures.extent import WHOLE, Extent
from archive.figures.extent import find as find_extent
from archive.figures.ink import (
    PARAMS,
    Box,
    Ink,
    darkest,
    intersection,
    measure,
    text_height,
)
from archive.figures.measures import title_letters
from archive.figures.ornaments import framed
from archive.figures.proposals import candidate_boxes
from archive.figures.text_rhythm import glyph_mask, text_zone
from archive.figures.verdicts import Region, judge, padded

__all__ = ["DEFAULT_MIN_AREA", "KINDS", "NEVER_KEPT", "OUTCOME_REASONS", "PARAMS", "PREVIEW_SIDE",
           "REASONS", "REVIEW_FLOOR", "THRESHOLD", "Finding", "Region", "candidates", "figures",
           "find", "reason_words"]

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
# The stage's tunings live in ``config.finder.LOOK`` (each with where it was measured);
# these names are its fields under the names archive/, bench/ and tests/ import.
DEFAULT_MIN_AREA = C.default_min_area
PREVIEW_SIDE = C.preview_side
THRESHOLD = C.threshold
REVIEW_FLOOR = C.review_floor
STAMP_ON_TEXT, STAMP_ALONE = C.stamp_on_text, C.stamp_alone
SIDEWAYS = C.sideways
SKEW_LEVEL = C.skew_level
CLOSER = C.closer
# the reader's decode of the same scan with a long side of at least n px (None: none finer)
Closer = Callable[[int], "Image.Image | None"]
# a page as the finder reads it: grey, RGB (None for a grey page), and its extent
Seen = tuple[np.ndarray, "np.ndarray | None", Extent]


@dataclass(frozen=True)
class Finding:
    """What the finder saw on a page: the printed page's extent and every candidate."""

    page: tuple[float, float, float, float]  # the page inside the scan, fractions of the image
    regions: list[Region]
    # the set text's height, a fraction of the preview's long side (0: no text measured);
    # its crops' edges are read at their own resolution by it (``crop_edges``)
    text_height: float = 0.0


def find(page: Image.Image, min_area: float = C.default_min_area,
         closer: Closer | None = None) -> Finding:
    """The page's extent and every candidate region, kept or not, in reading order (top
    to bottom, then left to right); what lies outside the page is listed, never kept.
    A page with a small crop is looked at again at another scale (``second_look``); with
    ``closer``, a page small in its scan is read again from a finer decode (``CLOSER``)."""
    seen = None
    if closer is not None:  # the extent alone says whether the page is small in its scan
        seen = _seen(page)
        nearer = None if seen is None else _closer_look(seen[2], page, min_area, closer)
        if nearer is not None:
            return nearer
    return _find(page, min_area, seen)


def _closer_look(extent: Extent, page: Image.Image, min_area: float,
                 closer: Closer) -> Finding | None:
    """The page's own area read from a decode where its long side is PREVIEW_SIDE; its
    regions and text height in the preview's frame, with what lies outside the page as
    the preview shows it. None where the page is big enough, or no finer decode is to be
    had: the preview is read as it is."""
    x0, y0, x1, y1 = extent.page
    side = max((x1 - x0) * page.width, (y1 - y0) * page.height)
    if extent.page == WHOLE or side <= 0 or side >= C.closer * C.preview_side:
        return None
    big = closer(math.ceil(C.preview_side * max(page.size) / side))
    if big is None or max(big.size) < C.closer_finer * max(page.size):
        return None
    w, h = big.size
    box = (round(x0 * w), round(y0 * h), round(x1 * w), round(y1 * h))
    if min(box[2] - box[0], box[3] - box[1]) < UNITS.min_side:
        return None
    inner = _find(big.crop(box), min_area)
    fx, fy, fw, fh = box[0] / w, box[1] / h, (box[2] - box[0]) / w, (box[3] - box[1]) / h

    def back(b: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        return (fx + b[0] * fw, fy + b[1] * fh, fx + b[2] * fw, fy + b[3] * fh)
    regions = [replace(r, box=back(r.box)) for r in inner.regions if r.reason != "outside_page"]
    regions += _outside(extent)
    th = inner.text_height * max(box[2] - box[0], box[3] - box[1]) / max(w, h)
    return Finding(extent.page, _reading_order(regions), th)


def _find(page: Image.Image, min_area: float, seen: Seen | None = None) -> Finding:
    """``find`` on the preview alone: one look, and a second for a page with a small crop
    (``seen``: the page's arrays and extent, where ``find`` has them already)."""
    found = _look(page, min_area, seen=seen)
    if not second_look.doubtful(found.regions):
        return found
    w, h = page.size
    scaled = page.resize((round(w * C.second_scale), round(h * C.second_scale)),
                         Image.Resampling.BOX)
    other = _look(scaled, min_area, C.second_scale).regions
    return Finding(found.page, second_look.veto(found.regions, other), found.text_height)


def _look(page: Image.Image, min_area: float, scale: float = 1.0,
          seen: Seen | None = None) -> Finding:
    """One look at the page: ``find`` without the second look. A page with a candidate
    (a shape many text lines tall) whose text runs down it (``_sideways``: a landscape
    plate or table printed across the book, its caption up the side; read across, its
    columns were crops, or hid its picture) is looked at turned a quarter clockwise
    instead: printers set such a page with its top at the left (the reader turns the
    book clockwise), so that turn makes it upright. One set the other way is read upside
    down, which the finder reads less well (the early books: crops that were pictures
    0.92 turned upright, 0.82 upside down; 0.55 read sideways). A page whose lines run
    ``SKEW_LEVEL`` degrees askew or more is looked at turned level (``_skew``). ``scale``:
    the page's size against the preview's (the second look's); ``seen``: the upright
    page's arrays and extent, where ``find`` has them already."""
    found = _analyse(page, scale, seen)
    if found is None:
        return Finding(WHOLE, [])
    ink, boxes = found
    if boxes and _sideways(ink):  # the way the page is read is settled before judging
        turned = _analyse(page.transpose(Image.Transpose.ROTATE_270), scale)
        if turned is not None:
            return _turned_back(_judged(*turned, min_area))
    elif boxes and abs(angle := _skew(ink)) >= C.skew_level:
        turn = cv2.getRotationMatrix2D((page.width / 2, page.height / 2), angle, 1.0)
        level = _analyse(Image.fromarray(cv2.warpAffine(
            np.asarray(page), turn, page.size, flags=cv2.INTER_NEAREST,
            borderMode=cv2.BORDER_REPLICATE)), scale)
        if level is not None:
            return _levelled_back(_judged(*level, min_area), turn, page.size)
    return _judged(ink, boxes, min_area)


def _skew(ink: Ink) -> float:
    """The angle (degrees, as ``cv2.getRotationMatrix2D`` takes it) that levels the
    page's lines (``page_skew``)."""
    return ink.skew


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
    return Finding(box(found.page), _reading_order(regions), found.text_height)


def _judged(ink: Ink, boxes: list[Box], min_area: float) -> Finding:
    """Every candidate of an analysed page judged, with its stamps and what lies outside."""
    stamps = [Region(padded(b, ink), C.stamp_score, "stamp", False, "stamp")
              for b in ink.stamps]
    regions = [judge(b, ink, min_area) for b in boxes] + stamps + _outside(ink.extent)
    return Finding(ink.extent.page, _reading_order(regions), ink.th / max(ink.full))


def _outside(extent: Extent) -> list[Region]:
    """What lies outside the page, listed and never kept."""
    return [Region(b, C.outside_score, "other", False, "outside_page") for b in extent.outside]


def _sideways(ink: Ink) -> bool:
    """Set text runs down the page, not across: the line rhythm read along the columns
    covers ``SIDEWAYS`` more of the page than along the rows, and twice as much
    (``LOOK.sideways_ratio``).

    The finder reads lines across the page; turned, a column of text is a tall block of
    specks with no rhythm, and was a crop (the early books turned a quarter: crops that
    were pictures 1.000 -> 0.554, text pages with no crop 1.000 -> 0.760).
    """
    labels, stats = ink.labels.T, ink.stats[:, [1, 0, 3, 2, 4]]
    th = text_height(stats[1:], labels.shape)
    down = float(text_zone(glyph_mask(labels, stats, th), th).mean())
    across = float(ink.zone.mean())
    return down - across >= C.sideways and down >= C.sideways_ratio * across


def _turned_back(found: Finding) -> Finding:
    """A finding on the page turned a quarter clockwise, in the page's own frame; each
    region says the turn that stands it upright, so its crop is cut upright."""
    def back(b: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
        return (b[1], 1.0 - b[2], b[3], 1.0 - b[0])
    regions = [replace(r, box=back(r.box), turned=90) for r in found.regions]
    return Finding(back(found.page), _reading_order(regions), found.text_height)


def candidates(page: Image.Image, min_area: float = C.default_min_area) -> list[Region]:
    """Every candidate region of ``find``, kept or not."""
    return find(page, min_area).regions


def figures(page: Image.Image, min_area: float = C.default_min_area) -> list[Region]:
    """The kept candidates: the pictures to crop."""
    return [r for r in candidates(page, min_area) if r.kept]


def _analyse(page: Image.Image, scale: float = 1.0, seen: Seen | None = None
             ) -> tuple[Ink, list[Box]] | None:
    """The page's ink and its candidate boxes in pixels; None for a page too small to read.
    ``scale``: the page's size against the preview's; the text height is read against the
    preview's size (``page_ink.measure``), so a second look at another scale still reads
    it the way its own pixels fall. ``seen``: ``_seen(page)``, where ``find`` has it."""
    seen = _seen(page) if seen is None else seen
    if seen is None:
        return None
    grey, rgb, extent = seen
    h, w = grey.shape
    px0, py0, px1, py1 = extent.page
    x0, y0 = int(px0 * w), int(py0 * h)
    x1, y1 = max(x0 + 1, round(px1 * w)), max(y0 + 1, round(py1 * h))
    grey, rgb = grey[y0:y1, x0:x1], None if rgb is None else rgb[y0:y1, x0:x1]
    pixels = _pixels(grey, rgb)
    side = round(max(h, w) / scale)
    sharper = focus.amount(grey)
    # sharpened to the rules' pages' focus, where printed: show-through is soft by nature
    if sharper and darkest(grey) >= C.printed_unprinted * MEASURES.unprinted:
        grey = focus.sharpen(grey, sharper)
        rgb = None if rgb is None else focus.sharpen(rgb, sharper)
    placed = {"origin": (x0, y0), "full": (h, w), "extent": extent, "pixels": pixels}
    ink = replace(measure(grey, rgb, side=side), **placed)
    boxes = candidate_boxes(ink, _picture)
    ringed = _ring_stamps(ink, boxes)
    if ringed:  # measured again without them: a stamp glues itself to what it touches
        ink = replace(measure(grey, rgb, ringed, side=side), **placed)
        boxes = candidate_boxes(ink, _picture)
    return ink, boxes


def _picture(box: Box, ink: Ink) -> bool:
    """Whether the verdicts keep a box at any size: what a frame must hold for the
    proposals to cut a picture out of its box at the frame (``frames.unframed``)."""
    return judge(box, ink, C.any_size_area).kept


def _seen(page: Image.Image) -> Seen | None:
    """The page as grey and RGB arrays (RGB None for a grey page) at the size the finder
    reads, and its extent found on them; None for a page too small to read."""
    grey = _grey(page)
    h, w = grey.shape
    if h < UNITS.min_side or w < UNITS.min_side:
        return None
    rgb = np.asarray(page) if page.mode == "RGB" else None
    k = max(h, w) // INK.work_side
    if k >= 2:  # whole-pixel reduction only: a fractional resize blurs a 1-px channel shut
        size = (max(1, w // k), max(1, h // k))
        grey = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
        rgb = None if rgb is None else cv2.resize(rgb, size, interpolation=cv2.INTER_AREA)
    return grey, rgb, find_extent(_pixels(grey, rgb))


def _pixels(grey: np.ndarray, rgb: np.ndarray | None) -> np.ndarray:
    return grey if rgb is None else rgb


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


def _ring_stamps(ink: Ink, boxes: list[Box]) -> list[Box]:
    """Stamps told by their thin round ring (any ink colour, black ones too) that colour
    did not find, looked for only where a box would be kept: a stamp elsewhere is in no
    crop, and the transform is the dearest step of a page. Nor in a box framed all round
    (a plate, a photograph): whatever a stamp in it glues, the frame bounds the crop."""
    kept = [b for b in boxes if _picture(b, ink) and not framed(b, ink)]
    if not kept:
        return []
    window = (min(b[0] for b in kept), min(b[1] for b in kept), max(b[2] for b in kept),
              max(b[3] for b in kept))
    big = ink.strong & ~ink.glyphs
    side = max(ink.shape)
    small = [b for b in kept if max(b[2] - b[0], b[3] - b[1]) <= MEASURES.stamp_box * side]
    found = ring_stamps.rings(ink.d, ink.strong, big, ink.th, window, small,
                              lambda cx, cy, r: _inked_over(ink, cx, cy, r))
    return [b for b in found if not any(intersection(b, f) for f in ink.stamps)]


def _inked_over(ink: Ink, cx: float, cy: float, r: float) -> bool:
    """Whether what lies round a circle is what a library stamps over: set text (the
    text zone round it in ``LOOK.stamp_on_text`` of the directions), title letters (two
    or more within 1.75 radii of its centre: ``LOOK.stamp_letters_min``,
    ``stamp_letters_near``) or bare paper (ink in ``LOOK.stamp_alone`` of them at most)."""
    if (ring_stamps.around(ink.zone, cx, cy, r) >= C.stamp_on_text
            or ring_stamps.around(ink.strong, cx, cy, r) <= C.stamp_alone):
        return True
    reach = C.stamp_letters_box
    box = (int(cx - reach * r), int(cy - reach * r), int(cx + reach * r) + 1,
           int(cy + reach * r) + 1)
    letters = ink.stats[1:][title_letters(box, ink)]
    x, y, w, h = (letters[:, k] for k in range(4))
    nearest = np.hypot(np.clip(cx, x, x + w) - cx, np.clip(cy, y, y + h) - cy)
    return int((nearest <= C.stamp_letters_near * r).sum()) >= C.stamp_letters_min


def reason_words(code: str) -> str:
    """The words for a reason code (a code this version does not know reads as itself)."""
    return REASONS.get(code) or OUTCOME_REASONS.get(code, code)


def _reading_order(regions: list[Region]) -> list[Region]:
    """Rows of regions whose vertical spans overlap, top row first, each row left to right."""
    rows: list[list[Region]] = []
    same_row = C.row_overlap
    for r in sorted(regions, key=lambda r: (r.box[1], r.box[0])):
        for row in rows:
            top, bottom = min(q.box[1] for q in row), max(q.box[3] for q in row)
            overlap = min(bottom, r.box[3]) - max(top, r.box[1])
            if overlap > same_row * min(bottom - top, r.box[3] - r.box[1]):
                row.append(r)
                break
        else:
            rows.append([r])
    return [r for row in rows for r in sorted(row, key=lambda r: r.box[0])]
