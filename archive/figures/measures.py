"""What a candidate box is like, measured on the page's ink: the features the verdicts
(``verdicts``) and the proposals (``proposals``) read. Each answers one question of a box
(how much of its ink lies in big shapes, whether it is a row of title letters, a chart,
a table, a pale drawing, a stain, set text with a mark over it) and decides nothing:
which answer keeps a box is ``verdicts``' business."""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures import components
from archive.figures.ink import PARAMS, Box, Ink, corr, intersection, runs, within

# share of a box's ink on lines of title letters that makes it lettering: pictures
# measured 0.14 at most (all shared sources, and the early pages scanned 13 other ways)
TITLE_INK = 0.4
# a colour or grey chart: this many solid blocks of one size in a row, holding this share
# of its box's ink (the library-scan composites' charts: 5-9 blocks, 0.45-0.55 of the ink)
CHART_PATCHES, CHART_INK = 4, 0.3
# or a run of colour patches (``charts``) this share of which lies in the box, or which
# covers this share of it
CHART_HELD, CHART_COVER = 0.9, 0.3
# a kept box this small (of the page's long side) may be a stamp glued to what it is inked
# over: ``figures`` looks for rings round it, ``_marked_text`` for set lines through it
STAMP_BOX = 0.25
# a kept box this small whose rows' darkness follows the lines of the set text beside it
# (within this many text heights, in this share of its rows) this closely is text with
# a mark inked over it: stamps whose ring is not seen measured 0.82-0.90, pictures beside
# text 0.37 at most
BESIDE, LINES_BESIDE, LINES_THROUGH = 3.0, 0.3, 0.6
# a page whose darkest ink (its 99.9th percentile, levels below the paper) is paler than
# this holds no print: a blank verso with the plate behind it showing through (real pages
# made versos at 10% and 15% of their print's depth, those cropped: 25-39), or a stain.
# Pages with pictures measured 113 at the least as published, and 45 washed out to 40% of
# their contrast (above this, lest a washed-out scan lose its plates)
UNPRINTED = 42
# a woodcut printed pale, or scanned with little contrast: its strokes are faint ink,
# broken into specks where they are dark, so its strong ink reads as text. Set text is
# where the page's line rhythm runs (under this share of the box here), and a pale
# drawing's faint ink is big shapes (PARAMS["big"] of it, as strong ink is a picture's)
# and mostly faint (strong ink at most this share of it: handwriting, which has no
# rhythm either and whose cursive joins, is dark; ufal's letters measured over it)
PALE_ZONE, PALE_STRONG = 0.05, 0.6


def big_share(box: Box, ink: Ink) -> float:
    """Share of the box's strong ink in shapes taller than 2.5 text heights (text: ~0)."""
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1]
    n = int(s.sum())
    if not n:
        return 0.0
    tall = ink.stats[:, 3] > 2.5 * ink.th
    return float(tall[ink.labels[y0:y1, x0:x1]][s].sum() / n)


def table(box: Box, ink: Ink) -> bool:
    """A table or a form: rules across its whole width, three or more, and between them
    glyphs only (by their faint ink as well). A drawing's lines run every way and end
    inside it; a picture framed by rules keeps its own big shapes inside the frame."""
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1].astype(np.uint8)
    k = max(3, int(round(4 * ink.th)))
    across = cv2.morphologyEx(s, cv2.MORPH_OPEN, np.ones((1, k), np.uint8))
    rows = across.sum(axis=1) >= 0.8 * (x1 - x0)
    if len(runs(rows, 1)) < 3:
        return False
    down = cv2.morphologyEx(s, cv2.MORPH_OPEN, np.ones((k, 1), np.uint8))
    cols = down.sum(axis=0) >= 0.8 * (y1 - y0)
    # only the rules that run the whole box go: a hatched picture's strokes stay its own
    lines = (across * rows[:, None].astype(np.uint8)) | (down * cols[None, :].astype(np.uint8))
    # the rest by its faint ink too: a painting's shades join into broad shapes, glyphs don't
    rest = ink.weak[y0:y1, x0:x1].astype(np.uint8) & ~cv2.dilate(lines, np.ones((3, 3), np.uint8))
    tall, n = in_tall_shapes(rest, ink.th)
    return n > 0 and tall < (1 - PARAMS["big"]) * n


def in_tall_shapes(mask: np.ndarray, th: float) -> tuple[int, int]:
    """(pixels of a 0/1 mask in shapes taller than 2.5 text heights, all its pixels): faint
    ink's big shapes, as ``big_share`` counts the page's strong ink in them."""
    _n, _lab, stats, _c = components.with_stats(mask, connectivity=8)
    return int(stats[1:, 4][stats[1:, 3] > 2.5 * th].sum()), int(stats[1:, 4].sum())


def line_art(box: Box, ink: Ink) -> bool:
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


def pale_drawing(box: Box, ink: Ink) -> bool:
    """A drawing printed or scanned pale: no set text's rhythm runs through it
    (``PALE_ZONE``), its faint ink is mostly big shapes and mostly faint
    (``PALE_STRONG``). Text keeps its rhythm however pale."""
    x0, y0, x1, y1 = box
    if float(ink.zone[y0:y1, x0:x1].mean()) >= PALE_ZONE:
        return False
    # a stamp's faint ink (its colour gone the paper's tint in a warm light) is no drawing
    if any(intersection(box, s) >= 0.5 * (x1 - x0) * (y1 - y0) for s in ink.stamps):
        return False
    weak = ink.weak[y0:y1, x0:x1].astype(np.uint8)
    if ink.strong[y0:y1, x0:x1].sum() > PALE_STRONG * weak.sum():  # dark: written, not pale
        return False
    tall, area = in_tall_shapes(weak, ink.th)
    return area > 0 and tall >= PARAMS["big"] * area


def lettering(box: Box, ink: Ink) -> bool:
    """A row of three or more glyphs of the box's height: a title line, not a picture.

    A glyph has two holes at most, as ``title_letters`` counts them: the figures of a
    small scene stood side by side are as tall, but hatched (a binarized chapbook
    woodcut's three people: 1, 4 and 4 holes at preview scale), and were taken for a
    title line.
    """
    x0, y0, x1, y1 = box
    st = ink.stats[1:]
    h = y1 - y0
    shaped = within(st, box) & (st[:, 3] >= 0.5 * h) & (st[:, 2] <= 1.6 * st[:, 3])
    tall = st[[i for i in np.flatnonzero(shaped) if _holes(ink, i + 1) <= 2]]
    # three tall shapes side by side may be three small woodcuts; four rarely are
    need = 3 if h < 8 * ink.th else 4
    return len(tall) >= need and tall[:, 2].sum() >= 0.4 * (x1 - x0)


def title_row(box: Box, ink: Ink) -> bool:
    """Title lettering, one line or several: ``TITLE_INK`` of the box's ink on lines of
    title letters (``title_letters``). A line's ink is its letters and whatever else sits in
    its rows no taller than it: words glued into one shape, a hyphen; not a woodcut
    initial beside it (taller than the line) or the rules of a title frame (no line's
    rows hold them), so an initial with its title is lettering too."""
    x0, y0, x1, y1 = box
    titled = title_letters(box, ink)
    if not len(titled):
        return False
    st = ink.stats[1:]
    y, h = st[:, 1], st[:, 3]
    inside = within(st, box)
    on = np.zeros(len(st), bool)
    for top, bottom in _lines(y[titled], h[titled]):
        slack = 0.1 * (bottom - top)
        on |= inside & (y >= top - slack) & (y + h <= bottom + slack) & (h <= bottom - top)
    return float(st[on, 4].sum()) >= TITLE_INK * float(ink.strong[y0:y1, x0:x1].sum())


def title_letters(box: Box, ink: Ink) -> np.ndarray:
    """The strong shapes (``stats`` rows less one) inside the box that are big
    letter-shaped glyphs (two holes at most), each with three more of its size along its
    line across the page (a title word can be cut in pieces, or glued to a stamp; its
    line tells what it is)."""
    st = ink.stats[1:]
    y, w, h, a = st[:, 1], st[:, 2], st[:, 3], st[:, 4]
    letter = (h >= 2 * ink.th) & (w >= 0.25 * h) & (w <= 1.6 * h) & (a <= 0.6 * w * h)
    inside = letter & within(st, box)
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


def _holes(ink: Ink, label: int) -> int:
    """Enclosed holes of one strong shape: a letter has two at most, a figure many."""
    x, y, w, h, _a = ink.stats[label].tolist()
    inv = (ink.labels[y:y + h, x:x + w] != label).astype(np.uint8)
    n, _lab, st, _c = components.with_stats(inv, connectivity=4)
    inner = (st[1:, 0] > 0) & (st[1:, 1] > 0) & (st[1:, 0] + st[1:, 2] < w) & (
        st[1:, 1] + st[1:, 3] < h)
    return int(inner.sum())


def ink_chart(box: Box, ink: Ink) -> bool:
    """A colour or grey chart photographed with the page: a row (or a column) of
    ``CHART_PATCHES`` solid blocks or more, of one size, holding a good part of the box's
    ink (``CHART_INK``).

    The page extent leaves a chart out when it finds the page; this is for when it cannot
    (a white page on a pale card). A print has no run of flat blocks: a woodcut's black
    ground is one shape with lines cut in it, and a facade's windows are a small part
    of its ink. Patches that touch, or are paler than ink, are ``patch_run_over``'s.
    """
    x0, y0, x1, y1 = box
    x, y, w, h, a = (ink.stats[1:, i].astype(np.int64) for i in range(5))
    solid = (within(ink.stats[1:], box) & (np.minimum(w, h) >= max(3.0, 0.5 * ink.th))
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


def patch_run_over(box: Box, ink: Ink) -> bool:
    """A chart's run of colour patches (``charts.patch_runs``) lies in the box (a crop
    with a chart in it is no training image, whatever else it holds), or covers
    ``CHART_COVER`` of it: a patch the colour of the card cuts the row into boxes of
    two or three patches."""
    x0, y0, x1, y1 = box
    return any(intersection(run, box) >= min(CHART_COVER * (x1 - x0) * (y1 - y0),
                                             CHART_HELD * (run[2] - run[0]) * (run[3] - run[1]))
               for run in ink.patch_runs)


def photo(box: Box, ink: Ink) -> bool:
    """Continuous tone: most of the non-paper pixels are mid-greys rather than inked lines."""
    x0, y0, x1, y1 = box
    weak = int(ink.weak[y0:y1, x0:x1].sum())
    strong = int(ink.strong[y0:y1, x0:x1].sum())
    return weak > 0 and (weak - strong) / weak > 0.5


def faint(box: Box, ink: Ink) -> bool:
    """A stain or show-through: hardly any strong ink, and even its darkest is pale (a
    photograph's shadows go deep)."""
    x0, y0, x1, y1 = box
    if ink.binary:  # paper exactly white: no show-through or foxing to be faint with
        return False
    return (float(ink.strong[y0:y1, x0:x1].mean()) < 0.03
            and float(np.percentile(ink.d[y0:y1, x0:x1], 99)) < 1.3 * ink.t)


def unprinted(ink: Ink) -> bool:
    """A page with no print on it, only what shows through from the other side (a blank
    verso behind a plate: the plate mirrored, faint and blurred) or stains: its darkest
    ink is paler than any printed page's (``UNPRINTED``). Paper scanned pure white counts
    too: a scan clipped to white still shows what lies behind."""
    return ink.darkest < UNPRINTED


def at_edge(box: Box, ink: Ink) -> bool:
    """A narrow or a faint shape at the paper's edge: binding thread, a torn, curled or
    shadowed margin."""
    h, w = ink.shape
    x0, y0, x1, y1 = box
    side = (x0 <= 0.03 * w or x1 >= 0.97 * w) and x1 - x0 < 0.1 * w
    top = (y0 <= 0.03 * h or y1 >= 0.97 * h) and y1 - y0 < 0.1 * h
    near = x0 <= 0.03 * w or x1 >= 0.97 * w or y0 <= 0.03 * h or y1 >= 0.97 * h
    # a curled corner or a shadow: faint, thin ink; anything printed is denser
    return side or top or (near and float(ink.weak[y0:y1, x0:x1].mean()) < 0.15)


def marked_text(box: Box, ink: Ink) -> bool:
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
    return corr(rows, lines) >= LINES_THROUGH
