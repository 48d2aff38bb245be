"""Find the printed page inside a scan, before anyone looks for pictures on it.

Why: libraries publish the scan as it was taken: the book on a dark cloth or a white
card, the facing page's edge, a colour chart and a shelf-mark label beside it. None of
that is a figure, and a finder that looks at the whole image crops it. Everything here
is relative to the image itself (its own paper colour, its own size), with no model.

How, on the reader's small preview:
1. A grey-level closing as wide as a few text lines paints the text over with its paper,
   so the page reads as one even tone; pictures stay darker patches inside it.
2. Every bright, common tone is a paper candidate (the page, a white label, the facing
   page); each gives a mask of pixels near its colour (lightness and hue), and the
   candidate whose largest connected patch spans the most area is the page's paper. A
   label or a chart lies apart from the page, on the background, so it is its own patch.
3. The facing page of an open book shows as a strip beside the page, darker than the
   page over its whole height (it curves away from the light): a side strip of columns
   whose bright rows are still darker than the page's middle is cut off. Strips on both
   sides that fade in rather than step up to the page are a lamp's falloff, and stay.
   A facing page meets the page at its edge, so no picture and no print of the page runs
   across a cut: a cut through a picture goes back to the fold (the strip's darkest
   line), or is none where that splits the picture too, and one through print (a title
   or a stamp in a gutter's shadow) is moved out past it.
4. A white page on a pale card (a grey-white one, lit unevenly) has a tone the card
   shares, so its paper mask runs out over the card: then the page is the patch of its
   brightest tone, if the card shows all round it and its edge steps up from the card on
   every side (a lamp's falloff is a slope, a panel of a slide reaches the image's edge).
   When no background can be told from the paper (a page cropped to its edges, a white
   page on white), the extent is the whole image.
5. What lies on the background (a chart, a label, the facing page) is listed too, so a
   curator can see what was left out: patches outside the page unlike the background.
   More than a few of them (``EXTENT.max_beside``) say the image is a page of its own
   layout.

The constants are ``config.extent.EXTENT``'s, each with where it was measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image

from archive.figures import components, levels
from archive.figures.config.extent import EXTENT as C
from archive.figures.config.units import UNITS

Box = tuple[float, float, float, float]
WHOLE: Box = (0.0, 0.0, 1.0, 1.0)


@dataclass(frozen=True)
class Extent:
    """The page's box and the boxes of what lies beside it (chart, label, facing page)."""

    page: Box
    outside: list[Box] = field(default_factory=list)


def page_extent(img: Image.Image) -> Box:
    """The printed page's box, in fractions of ``img``; the whole image when no page stands out."""
    rgb = _rgb(img)
    return WHOLE if rgb is None else find(rgb).page


def find(pixels: np.ndarray) -> Extent:
    """The page extent of a uint8 RGB (or grey) array, and what lies outside it."""
    h, w = pixels.shape[:2]
    if min(h, w) < UNITS.min_side:
        return Extent(WHOLE)
    f = C.work_side / max(h, w)
    if f < C.shrink_under:
        pixels = cv2.resize(pixels, (max(1, round(w * f)), max(1, round(h * f))),
                            interpolation=cv2.INTER_AREA)
    if pixels.ndim == 2:
        pixels = np.repeat(pixels[..., None], 3, axis=2)
    lab = _closed_lab(pixels)
    h, w = lab.shape[:2]
    found = _paper_patch(lab) or (0, 0, w, h)
    box = _without_facing_page(lab[..., 0], found, _print(pixels, lab[..., 0]))
    beside = _outside(lab, box)
    if len(beside) > C.max_beside:  # a layout of its own (a diagram, a photo), not a scan bed
        return Extent(WHOLE)
    x0, y0, x1, y1 = box
    return Extent((x0 / w, y0 / h, x1 / w, y1 / h),
                  [(a / w, b / h, c / w, d / h) for thing in beside for a, b, c, d in thing])


def _outside(lab: np.ndarray, box: tuple[int, int, int, int]
             ) -> list[list[tuple[int, int, int, int]]]:
    """Things on the background: patches outside the page unlike the background's colour
    (the median of the image's outer rim), each ``beside_least`` of the image (0.2%) or
    more, each as its pieces on the page's four sides (``_sides``)."""
    h, w = lab.shape[:2]
    x0, y0, x1, y1 = box
    if (x0, y0, x1, y1) == (0, 0, w, h):
        return []
    bg = np.median(_rim(lab), axis=0).astype(np.int16)
    diff = np.abs(lab.astype(np.int16) - bg).sum(axis=2) > C.beside_diff
    diff[y0:y1, x0:x1] = False
    mask = cv2.morphologyEx(diff.astype(np.uint8), cv2.MORPH_OPEN, _opening())
    n, labels, stats, _c = components.with_stats(mask, connectivity=8)
    least = C.beside_least * h * w
    return [_sides(labels == i, box) for i in range(1, n) if stats[i, 4] >= least]


def _sides(thing: np.ndarray, box: tuple[int, int, int, int]) -> list[tuple[int, int, int, int]]:
    """A thing's boxes above, below, left and right of the page: one strip that runs
    round the page's corner (a shadow down its side and under it) boxed whole takes in
    the page (Moreno 285_1: 95% of it). Its biggest piece at least, and any other piece
    of ``beside_piece`` of it (20%) or more."""
    h, w = thing.shape
    x0, y0, x1, y1 = box
    pieces = []
    for sx0, sy0, sx1, sy1 in ((0, 0, w, y0), (0, y1, w, h), (0, y0, x0, y1), (x1, y0, w, y1)):
        ys, xs = np.nonzero(thing[sy0:sy1, sx0:sx1])
        if len(xs):
            pieces.append((len(xs), (sx0 + int(xs.min()), sy0 + int(ys.min()),
                                     sx0 + int(xs.max()) + 1, sy0 + int(ys.max()) + 1)))
    most = max(n for n, _b in pieces)
    return [b for n, b in pieces if n >= C.beside_piece * most]


def _rgb(img: Image.Image) -> np.ndarray | None:
    """The image as uint8 RGB; None when too small to hold a layout."""
    if img.width < UNITS.min_side or img.height < UNITS.min_side:
        return None
    return np.asarray(img if img.mode == "RGB" else img.convert("RGB"))


def _closed_lab(rgb: np.ndarray) -> np.ndarray:
    """Lab of the image with dark strokes narrower than 1/``close_per_side`` (1/48) of its
    side closed over."""
    h, w = rgb.shape[:2]
    k = max(C.close_least_px, (max(h, w) // C.close_per_side) | 1)
    closed = cv2.morphologyEx(rgb, cv2.MORPH_CLOSE,
                              cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    return cv2.cvtColor(closed, cv2.COLOR_RGB2LAB)


def _paper_levels(light: np.ndarray, lit: bool = False) -> list[int]:
    """Lightness levels that are a local peak of the histogram and hold ``tone_share`` of
    the pixels (5%; the ``tones_kept`` that hold most); with ``lit``, that share of those
    not dark (a small page on a dark bed, ``_paper_patch``).

    Very dark levels are never paper: a cloth or a cover is what they are.
    """
    hist = np.bincount(light.ravel(), minlength=256).astype(np.float64)
    of = max(1.0, float(hist[C.dark:].sum())) if lit else light.size
    mass = np.convolve(hist, np.ones(C.tone_mass_levels), "same") / of
    smooth = np.convolve(hist, np.ones(C.tone_smooth_levels) / C.tone_smooth_levels, "same")
    # each level's neighbourhood max (tone_peak_reach either side) at once: a loop of 194
    # slices cost 0.6 ms a page
    reach = C.tone_peak_reach
    around = np.lib.stride_tricks.sliding_window_view(
        np.pad(smooth, reach, constant_values=-np.inf), 2 * reach + 1).max(axis=1)
    tones = np.arange(C.dark, C.tone_top)
    peaks = tones[(smooth[tones] >= around[tones]) & (mass[tones] >= C.tone_share)].tolist()
    return sorted(sorted(peaks, key=lambda v: -mass[v])[:C.tones_kept])  # the commonest


def _near(lab: np.ndarray, level: float) -> np.ndarray:
    """Pixels of that paper's colour: a little lighter, or up to 30% darker (lighting, foxing:
    ``paper_darker``), and of its hue (a cream page is not a white card, nor a grey one)."""
    light = lab[..., 0]
    near = (light >= level - C.hue_band) & (light <= level + C.hue_band)
    a, b = levels.quantile(lab[..., 1][near], 0.5), levels.quantile(lab[..., 2][near], 0.5)
    chroma = float(np.hypot(a - 128, b - 128))  # 128: a and b's neutral in 8-bit Lab
    tol = max(C.hue_tol_least, C.hue_tol_chroma * chroma)
    da = lab[..., 1].astype(np.int16) - a
    db = lab[..., 2].astype(np.int16) - b
    mask = ((light >= C.paper_darker * level)
            & (light <= C.paper_lighter * level + C.paper_lighter_levels)
            & (da * da + db * db <= tol * tol)).astype(np.uint8)
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, _opening())


def _opening() -> np.ndarray:
    """The square every paper and outside mask is opened with (``open_px``): specks go."""
    return np.ones((C.open_px, C.open_px), np.uint8)


def _paper_patch(lab: np.ndarray) -> tuple[int, int, int, int] | None:
    """The box (px) of the largest patch of any paper candidate; None when it is the image.

    A tone that is the image's rim is the background (a white or grey card), a frame
    around the page, not its paper; unless it fills the image, which the page then
    does. A patch under a fifth of the image (``page_least``) is no page (a page that is
    all picture): the whole image is safer than a guess, unless what lies round it is a
    bed (``_on_bed``). A page under about a sixth of a dark bed holds no tone in 5% of the
    image, and its tones are read among what is lit; a patch of one is a page only on a
    bed. A darker tone's patch inside a rim-tone card must be solid paper
    (``margin_page_solid``): a frontispiece's mid-tones are scattered over the picture.
    """
    h, w = lab.shape[:2]
    best: tuple[int, tuple[int, int, int, int]] | None = None
    tones, card = _paper_levels(lab[..., 0]), 0
    small = not tones
    if small:
        tones = _paper_levels(lab[..., 0], lit=True)
    for level in tones[::-1]:  # brightest first: a card's tone is known below it
        mask = _near(lab, level)
        patch = _joined(mask)
        if patch is None:
            continue
        x, y, bw, bh, a = patch
        if _on_rim(mask):
            if a >= C.paper_solid * bw * bh:  # not a frame around a page: it fills the image
                return _brighter_page(lab, tones[-1])
            card = max(card, level)
            continue
        if level < card and a < C.margin_page_solid * bw * bh:
            continue
        if best is None or bw * bh >= best[0]:  # ties to the darker tone
            best = (bw * bh, (x, y, x + bw, y + bh))
    if best is None or best[0] >= C.patch_whole * w * h:
        return None
    if (small or best[0] < C.page_least * w * h) and not _on_bed(lab[..., 0], best[1]):
        return None
    return best[1]


def _on_bed(light: np.ndarray, box: tuple[int, int, int, int]) -> bool:
    """A small page on a copy stand's bed (a small book under a camera set for larger
    ones): round the paper, the image is one even tone much darker than it (``bed_even``,
    ``bed_share``, ``bed_darker``). A slide or a
    poster whose largest paper-like patch is small has its own print round it (on the
    shared sets: even on 0.18-0.54 of it, or no darker than the patch)."""
    x0, y0, x1, y1 = box
    out = np.ones(light.shape, bool)
    out[y0:y1, x0:x1] = False
    rest = light[out].astype(np.float32)
    if rest.size == 0:
        return False
    level = float(np.median(rest))
    paper = float(np.median(light[y0:y1, x0:x1]))
    even = float((np.abs(rest - level) <= C.bed_even).mean())
    return paper - level >= C.bed_darker and even >= C.bed_share


def _largest(mask: np.ndarray) -> list[int] | None:
    """x, y, width, height and area (px) of the mask's largest 4-connected patch; None
    when the mask is empty."""
    n, _lab, stats, _c = components.with_stats(mask, connectivity=4)
    return None if n < 2 else stats[1 + int(np.argmax(stats[1:, 4]))].tolist()


def _joined(mask: np.ndarray) -> list[int] | None:
    """The mask's largest 4-connected patch, joined with the patches that share both its
    sides (within ``across`` of the image's side) and meet it across at most that much: a
    picture as wide as the page's paper can cut that paper in two (a roundel whose widest
    row all but touches its plate mark, once a scan is darker), and a half page is not
    the page. x, y, width, height and area (px); None when the mask is empty."""
    n, _lab, stats, _c = components.with_stats(mask, connectivity=4)
    if n < 2:
        return None
    h, w = mask.shape
    tol = (max(C.joined_least_px, round(C.across * w)),
           max(C.joined_least_px, round(C.across * h)))
    patches = sorted(stats[1:].tolist(), key=lambda s: -s[4])
    x, y, bw, bh, a = patches[0]
    box = [x, y, x + bw, y + bh]
    piece = C.joined_piece  # a local: read per patch
    for px, py, pw, ph, pa in patches[1:]:
        if pa < piece * a:
            break
        other = (px, py, px + pw, py + ph)
        for along in (0, 1):  # stacked (sharing the sides), then side by side
            lo, hi, gap = along, along + 2, 1 - along
            if (abs(other[lo] - box[lo]) <= tol[along] and abs(other[hi] - box[hi]) <= tol[along]
                    and max(other[gap], box[gap]) - min(other[gap + 2], box[gap + 2]) <= tol[gap]):
                box = [min(box[0], other[0]), min(box[1], other[1]),
                       max(box[2], other[2]), max(box[3], other[3])]
                a += pa
                break
    return [box[0], box[1], box[2] - box[0], box[3] - box[1], a]


def _brighter_page(lab: np.ndarray, level: int) -> tuple[int, int, int, int] | None:
    """A white page on a pale card: the patch of the brightest paper tone ``level``, when the card
    shows all round it and its edge steps up from the card on every side; else None
    (the page fills the image).

    The card is near the page's tone (a grey-white, lit unevenly), so the paper mask of
    ``_near`` runs out over it; only the page is as bright as its brightest tone, and a
    page's edge is a step where a lamp's falloff is a slope (``edge_step``).
    """
    h, w = lab.shape[:2]
    light = lab[..., 0]
    # the rim is as bright: no card shows
    if levels.quantile(_rim(lab)[:, 0], 0.5) >= level - C.bright_levels:
        return None
    mask = (_near(lab, level) & (light >= level - C.bright_levels)).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, _opening())
    patch = _largest(mask)
    if patch is None or _on_rim(mask):
        return None
    x, y, bw, bh, a = patch
    m, far = C.card_inset, 1 - C.card_inset
    inset = x >= m * w and y >= m * h and x + bw <= far * w and y + bh <= far * h
    if not inset or bw * bh < C.card_page_least * w * h or a < C.paper_solid * bw * bh:
        return None  # the card shows all round a page on it: else a panel, a margin line
    box = (x, y, x + bw, y + bh)
    return box if _steps_all_round(light, box, level) else None


def _steps_all_round(light: np.ndarray, box: tuple[int, int, int, int], level: int) -> bool:
    """Whether lightness steps up by ``edge_step`` of ``level`` from ``edge_read_px`` (2 px)
    outside each side of ``box`` to as far inside it (median along the side), on every
    side that is not the image's own edge."""
    h, w = light.shape
    x0, y0, x1, y1 = box
    f = light.astype(np.float32)
    r = C.edge_read_px  # the pixel r past the edge line each way: x0 + r and x0 - r - 1
    sides = []
    if x0 >= r + 1:
        sides.append(np.median(f[y0:y1, x0 + r] - f[y0:y1, x0 - r - 1]))
    if x1 <= w - r - 1:
        sides.append(np.median(f[y0:y1, x1 - r - 1] - f[y0:y1, x1 + r]))
    if y0 >= r + 1:
        sides.append(np.median(f[y0 + r, x0:x1] - f[y0 - r - 1, x0:x1]))
    if y1 <= h - r - 1:
        sides.append(np.median(f[y1 - r - 1, x0:x1] - f[y1 + r, x0:x1]))
    return bool(sides) and min(sides) >= C.edge_step * level


def _rim(lab: np.ndarray) -> np.ndarray:
    """The image's outer ring (1/``rim_per_side``, 2%, of its short side), as Lab pixels."""
    h, w = lab.shape[:2]
    k = max(1, min(h, w) // C.rim_per_side)
    return np.concatenate([lab[:k].reshape(-1, 3), lab[-k:].reshape(-1, 3),
                           lab[:, :k].reshape(-1, 3), lab[:, -k:].reshape(-1, 3)])


def _on_rim(mask: np.ndarray) -> bool:
    """Whether a paper candidate covers most of the image's rim (``rim_covered``): then it
    is the background."""
    h, w = mask.shape
    k = max(1, min(h, w) // C.rim_per_side)
    ring = np.concatenate([mask[:k].ravel(), mask[-k:].ravel(), mask[:, :k].ravel(),
                           mask[:, -k:].ravel()])
    return float(ring.mean()) >= C.rim_covered


def _without_facing_page(light: np.ndarray, box: tuple[int, int, int, int],
                         printed: np.ndarray) -> tuple[int, int, int, int]:
    """Cut a strip off each side whose bright part is darker than the page's middle.

    Per column (then per row), the 80th percentile (``profile_share``) of the closed
    lightness, against ``facing_dark`` of the page's level: a picture
    near the edge covers only part of a column, so its bright rows are paper; the facing
    page, turned away from the light, is darker all the way down.
    """
    x0, y0, x1, y1 = box
    for axis in (0, 1):
        sub = light[y0:y1, x0:x1]
        k = int(C.profile_share * (sub.shape[axis] - 1))
        prof = np.partition(sub, k, axis=axis).take(k, axis=axis)
        n = len(prof)
        if n < C.profile_least:
            continue
        # from a quarter in to the far end: the slice's old end, 3 * n - 3 * n // 4, was
        # always past n, so the page's level was never read on its middle half alone
        ref = float(np.median(prof[n // C.ref_from:]))
        dark = prof < C.facing_dark * ref
        lo = _run(dark)
        hi = n - _run(dark[::-1])
        least, most = C.strip_least * n, C.strip_most * n
        lo = lo if least <= lo <= most else 0
        hi = hi if least <= n - hi <= most else n
        if lo and hi < n and _lamp(prof, lo, ref) and _lamp(prof[::-1], n - hi, ref):
            lo, hi = 0, n
        along = sub if axis == 0 else sub.T  # one column per position of the cut
        if lo and _splits_picture(along, lo, ref, -1):
            lo = _at_fold(along, prof, lo, ref, -1)
        if hi < n and _splits_picture(along, hi, ref, 1):
            hi = _at_fold(along, prof, hi, ref, 1)
        ink = printed[y0:y1, x0:x1]
        ink = ink if axis == 0 else np.ascontiguousarray(ink.T)
        lo = _past_print(ink, lo, -1) if lo else 0
        hi = _past_print(ink, hi, 1) if hi < n else n
        lo = lo if lo >= least else 0
        hi = hi if n - hi >= least else n
        if axis == 0:
            x0, x1 = x0 + lo, x0 + hi
        else:
            y0, y1 = y0 + lo, y0 + hi
    return x0, y0, x1, y1


def _print(rgb: np.ndarray, closed: np.ndarray) -> np.ndarray:
    """Print, as a 0/1 mask: darker than the closed page round it by ``print_dark`` of its
    level (``print_least`` levels at least); relative, so print in a gutter's shadow
    counts and the shadow itself does not."""
    light = cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB)[..., 0].astype(np.int16)
    c = closed.astype(np.int16)
    return ((c - light) > np.maximum(C.print_least, C.print_dark * c)).astype(np.uint8)


def _past_print(ink: np.ndarray, cut: int, outward: int) -> int:
    """The cut moved out past the print that runs across it: a cut through the page's
    own print (a title, a woodcut, a stamp in a gutter's shadow) is the shadow's, not the
    facing page's edge. Lines along the cut (the page's edge, a leaf's slanting edge),
    shapes longer along the cut than twice across (``print_long``), and what reaches the
    strip's ends (the image's edge, the page's corners) are not print."""
    rows = ink.shape[0]
    line = max(C.edge_line_least_px, round(C.edge_line * rows))
    along = cv2.getStructuringElement(cv2.MORPH_RECT, (1, line))
    ink = ink * (1 - cv2.morphologyEx(ink, cv2.MORPH_OPEN, along))
    _k, _lab, stats, _c = components.with_stats(ink, connectivity=8)
    x, y, w, h, a = (stats[1:, i] for i in range(5))
    m = max(1, round(C.strip_end * rows))  # what reaches the strip's ends is the scan's edge
    on = ((x < cut) & (x + w > cut) & (C.print_long * w >= h) & (a >= C.print_least_px)
          & (y >= m) & (y + h <= rows - m))
    if not on.any():
        return cut
    return int(x[on].min()) if outward < 0 else int((x + w)[on].max())


def _lamp(prof: np.ndarray, cut: int, ref: float) -> bool:
    """Whether the dark strip before ``cut`` fades in, as under a lamp's falloff: the
    profile rises less than ``lamp_step`` of the page's level across the cut (``across``,
    3% of the side, either way). Asked of both sides at once: a facing page is one
    side's, and steps up to the page at its edge; a lamp darkens both sides smoothly, and
    cutting them cut the pictures near them (``bench/figure_robustness.py``, light
    falloff)."""
    n = len(prof)
    s = _across(n)
    return float(prof[min(n - 1, cut + s)]) - float(prof[max(0, cut - s)]) < C.lamp_step * ref


def _splits_picture(light: np.ndarray, cut: int, ref: float, outward: int) -> bool:
    """Whether a cut at column ``cut`` would run through a picture: in a run of rows
    (``picture_rows`` of them or more) the closed page is darker than ``picture_dark`` of
    the paper all across the cut (``across``, 3% of the side, either way), and the strip
    cut off (``outward`` of the cut: -1 before it, 1 after) is dark in under
    ``outside_dark`` of its rows (a dark bed or a book edge is dark all the way down).
    Text is closed over with its paper, and a facing page meets the page at its edge, so
    only a picture lies across."""
    h, n = light.shape
    s = _across(n)
    band = light[:, max(0, cut - s): min(n, cut + s + 1)]
    dark = band.max(axis=1) < C.picture_dark * ref  # no paper between: one picture across
    outside = light[:, min(n - 1, max(0, cut + outward * s))] < C.picture_dark * ref
    return _longest_run(dark) >= C.picture_rows * h and outside.mean() < C.outside_dark


def _at_fold(light: np.ndarray, prof: np.ndarray, cut: int, ref: float, outward: int) -> int:
    """Where a cut through a picture goes instead: back to the fold, the darkest column of
    the strip it would cut off (a facing page meets the page there), where that splits no
    picture and leaves a strip of ``strip_least`` at least; else nowhere (0 before the
    page, the side's length after it). A woodcut set
    tight at the gutter reaches into the page's own shaded curve beyond the fold, and the
    whole strip, facing page and all, was kept with it (HAB's Wolfenbüttel scans)."""
    n = len(prof)
    fold = 1 + int(np.argmin(prof[:cut])) if outward < 0 else cut + int(np.argmin(prof[cut:]))
    if min(fold, n - fold) < C.strip_least * n or _splits_picture(light, fold, ref, outward):
        return 0 if outward < 0 else n
    return fold


def _across(n: int) -> int:
    """``across`` of a side of n px, at least a pixel."""
    return max(1, round(C.across * n))


def _longest_run(flags: np.ndarray) -> int:
    """Length of the longest run of True that touches neither end: a picture lies on the
    page, while the dark at a strip's ends is the bed or the book's edge beyond the top
    or the bottom of the page, not cut off yet."""
    padded = np.concatenate([[0], flags.astype(np.int8), [0]])
    edges = np.flatnonzero(np.diff(padded))
    runs = [b - a for a, b in zip(edges[::2], edges[1::2], strict=True)
            if a > 0 and b < len(flags)]
    return max(runs, default=0)


def _run(flags: np.ndarray) -> int:
    """Length of the run of True at the start."""
    off = np.flatnonzero(~flags)
    return int(off[0]) if len(off) else len(flags)
