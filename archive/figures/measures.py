"""What a candidate box is like, measured on the page's ink: the features the verdicts
(``verdicts``) and the proposals (``proposals``) read. Each answers one question of a box
(how much of its ink lies in big shapes, whether it is a row of title letters, a chart,
a table, a pale drawing, a stain, set text with a mark over it) and decides nothing:
which answer keeps a box is ``verdicts``' business."""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures import components
from archive.figures.config.units import UNITS
from archive.figures.config.verdicts import MEASURES as C
from archive.figures.ink import PARAMS, Box, Ink, corr, intersection, runs, within

# the names ``finder`` imports: a kept box this small (of the page's long side) may be a
# stamp glued to what it is inked over (``finder`` looks for rings round it,
# ``marked_text`` for set lines through it); a page whose darkest ink is paler holds no
# print (``unprinted``)
STAMP_BOX = C.stamp_box
UNPRINTED = C.unprinted


def big_share(box: Box, ink: Ink) -> float:
    """Share of the box's strong ink in shapes taller than ``UNITS.glyph_h`` text heights
    (text: ~0)."""
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1]
    n = int(s.sum())
    if not n:
        return 0.0
    tall = ink.stats[:, 3] > UNITS.glyph_h * ink.th
    return float(tall[ink.labels[y0:y1, x0:x1]][s].sum() / n)


def table(box: Box, ink: Ink) -> bool:
    """A table or a form: rules across its whole width, three or more, and between them
    glyphs only (by their faint ink as well). A drawing's lines run every way and end
    inside it; a picture framed by rules keeps its own big shapes inside the frame."""
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1].astype(np.uint8)
    k = max(C.table_rule_min_px, int(round(C.table_rule_len * ink.th)))
    across = cv2.morphologyEx(s, cv2.MORPH_OPEN, np.ones((1, k), np.uint8))
    rows = across.sum(axis=1) >= C.table_rule_span * (x1 - x0)
    if len(runs(rows, 1)) < C.table_rules:
        return False
    down = cv2.morphologyEx(s, cv2.MORPH_OPEN, np.ones((k, 1), np.uint8))
    cols = down.sum(axis=0) >= C.table_rule_span * (y1 - y0)
    # only the rules that run the whole box go: a hatched picture's strokes stay its own
    lines = (across * rows[:, None].astype(np.uint8)) | (down * cols[None, :].astype(np.uint8))
    # the rest by its faint ink too: a painting's shades join into broad shapes, glyphs don't
    clear = np.ones((C.table_rule_clear_px, C.table_rule_clear_px), np.uint8)
    rest = ink.weak[y0:y1, x0:x1].astype(np.uint8) & ~cv2.dilate(lines, clear)
    tall, n = in_tall_shapes(rest, ink.th)
    return n > 0 and tall < (1 - PARAMS["big"]) * n


def in_tall_shapes(mask: np.ndarray, th: float) -> tuple[int, int]:
    """(pixels of a 0/1 mask in shapes taller than ``UNITS.glyph_h`` text heights, all its
    pixels): faint ink's big shapes, as ``big_share`` counts the page's strong ink in them."""
    _n, _lab, stats, _c = components.with_stats(mask, connectivity=8)
    return (int(stats[1:, 4][stats[1:, 3] > UNITS.glyph_h * th].sum()),
            int(stats[1:, 4].sum()))


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
    return (weak > C.line_art_faint * (x1 - x0) * (y1 - y0)
            and ink.strong[y0:y1, x0:x1].sum() < C.line_art_strong * weak)


def pale_drawing(box: Box, ink: Ink) -> bool:
    """A drawing printed or scanned pale: no set text's rhythm runs through it
    (``MEASURES.pale_zone``), its faint ink is mostly big shapes and mostly faint
    (``MEASURES.pale_strong``). Text keeps its rhythm however pale.

    A woodcut printed pale, or scanned with little contrast, has faint strokes, broken
    into specks where they are dark, so its strong ink reads as text; a pale drawing's
    faint ink is big shapes (PARAMS["big"] of it, as strong ink is a picture's)."""
    x0, y0, x1, y1 = box
    if float(ink.zone[y0:y1, x0:x1].mean()) >= C.pale_zone:
        return False
    # a stamp's faint ink (its colour gone the paper's tint in a warm light) is no drawing
    in_stamp = C.pale_in_stamp * (x1 - x0) * (y1 - y0)
    if any(intersection(box, s) >= in_stamp for s in ink.stamps):
        return False
    weak = ink.weak[y0:y1, x0:x1].astype(np.uint8)
    if ink.strong[y0:y1, x0:x1].sum() > C.pale_strong * weak.sum():  # dark: written, not pale
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
    shaped = (within(st, box) & (st[:, 3] >= C.lettering_shape_h * h)
              & (st[:, 2] <= C.letter_aspect * st[:, 3]))
    holes = C.letter_holes
    tall = st[[i for i in np.flatnonzero(shaped) if _holes(ink, i + 1) <= holes]]
    # three tall shapes side by side may be three small woodcuts; four rarely are
    need = C.lettering_few if h < C.lettering_few_under * ink.th else C.lettering_many
    return len(tall) >= need and tall[:, 2].sum() >= C.lettering_width * (x1 - x0)


def title_row(box: Box, ink: Ink) -> bool:
    """Title lettering, one line or several: ``MEASURES.title_ink`` of the box's ink on
    lines of title letters (``title_letters``). A line's ink is its letters and whatever
    else sits in its rows no taller than it: words glued into one shape, a hyphen; not a
    woodcut initial beside it (taller than the line) or the rules of a title frame (no
    line's rows hold them), so an initial with its title is lettering too."""
    x0, y0, x1, y1 = box
    titled = title_letters(box, ink)
    if not len(titled):
        return False
    st = ink.stats[1:]
    y, h = st[:, 1], st[:, 3]
    inside = within(st, box)
    on = np.zeros(len(st), bool)
    for top, bottom in _lines(y[titled], h[titled]):
        slack = C.title_line_slack * (bottom - top)
        on |= inside & (y >= top - slack) & (y + h <= bottom + slack) & (h <= bottom - top)
    return float(st[on, 4].sum()) >= C.title_ink * float(ink.strong[y0:y1, x0:x1].sum())


def title_letters(box: Box, ink: Ink) -> np.ndarray:
    """The strong shapes (``stats`` rows less one) inside the box that are big
    letter-shaped glyphs (two holes at most), each with three more of its size along its
    line across the page (a title word can be cut in pieces, or glued to a stamp; its
    line tells what it is)."""
    st = ink.stats[1:]
    y, w, h, a = st[:, 1], st[:, 2], st[:, 3], st[:, 4]
    letter = ((h >= C.title_letter_h * ink.th) & (w >= C.title_letter_thin * h)
              & (w <= C.letter_aspect * h) & (a <= C.title_letter_fill * w * h))
    inside = letter & within(st, box)
    if not inside.any():
        return np.zeros(0, int)
    cand, others = np.flatnonzero(inside), np.flatnonzero(letter)
    ch, oh = h[cand][:, None], h[others][None, :]
    overlap = (np.minimum(y[cand][:, None] + ch, y[others][None, :] + oh)
               - np.maximum(y[cand][:, None], y[others][None, :]))
    low = np.minimum(ch, oh)
    # the same size; or the same cap line with a tail below it (a Q, a J: up to half again)
    capped = ((np.abs(y[cand][:, None] - y[others][None, :]) <= C.title_cap_line * low)
              & (np.maximum(ch, oh) <= C.title_tail * low))
    alike = (((np.abs(oh - ch) <= C.title_same_size * ch) | capped)
             & (overlap >= C.title_overlap * low))
    holes = C.letter_holes
    return np.array([i for i in cand[alike.sum(axis=1) >= C.title_alike]
                     if _holes(ink, i + 1) <= holes], int)


def _lines(tops: np.ndarray, heights: np.ndarray) -> list[tuple[int, int]]:
    """(top, bottom) rows of the lines that letters make, top to bottom: a letter that
    reaches over a third of its height above a line's bottom is on that line."""
    lines: list[list[int]] = []
    join = C.line_join
    for i in np.argsort(tops, kind="stable"):
        t, b = int(tops[i]), int(tops[i] + heights[i])
        if lines and t < lines[-1][1] - heights[i] / join:
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
    ``MEASURES.chart_patches`` solid blocks or more, of one size, holding a good part of
    the box's ink (``MEASURES.chart_ink``).

    The page extent leaves a chart out when it finds the page; this is for when it cannot
    (a white page on a pale card). A print has no run of flat blocks: a woodcut's black
    ground is one shape with lines cut in it, and a facade's windows are a small part
    of its ink. Patches that touch, or are paler than ink, are ``patch_run_over``'s.
    """
    x0, y0, x1, y1 = box
    x, y, w, h, a = (ink.stats[1:, i].astype(np.int64) for i in range(5))
    least = max(C.chart_patch_min_px, C.chart_patch_min_th * ink.th)
    solid = (within(ink.stats[1:], box) & (np.minimum(w, h) >= least)
             & (a >= C.chart_patch_fill * w * h))
    patches = C.chart_patches
    if solid.sum() < patches:
        return False
    x, y, w, h, a = x[solid], y[solid], w[solid], h[solid], a[solid]
    ink_px = int(ink.strong[y0:y1, x0:x1].sum())
    align_px, align, same_side, same_other = (C.chart_align_px, C.chart_align,
                                              C.chart_same_side, C.chart_same_other)
    chart_ink = C.chart_ink
    for lead, side, other in ((y, h, w), (x, w, h)):  # a row, then a column
        for i in range(len(lead)):
            like = ((np.abs(lead - lead[i]) <= max(align_px, align * side[i]))
                    & (np.abs(side - side[i]) <= same_side * side[i])
                    & (np.abs(other - other[i]) <= same_other * other[i]))
            if like.sum() >= patches and a[like].sum() >= chart_ink * ink_px:
                return True
    return False


def patch_run_over(box: Box, ink: Ink) -> bool:
    """A chart's run of colour patches (``charts.patch_runs``) lies in the box (a crop
    with a chart in it is no training image, whatever else it holds), or covers
    ``MEASURES.chart_cover`` of it: a patch the colour of the card cuts the row into boxes
    of two or three patches."""
    x0, y0, x1, y1 = box
    cover = C.chart_cover * (x1 - x0) * (y1 - y0)
    held = C.chart_held
    return any(intersection(run, box) >= min(cover,
                                             held * (run[2] - run[0]) * (run[3] - run[1]))
               for run in ink.patch_runs)


def photo(box: Box, ink: Ink) -> bool:
    """Continuous tone: most of the non-paper pixels are mid-greys rather than inked lines."""
    x0, y0, x1, y1 = box
    weak = int(ink.weak[y0:y1, x0:x1].sum())
    strong = int(ink.strong[y0:y1, x0:x1].sum())
    return weak > 0 and (weak - strong) / weak > C.photo_faint


def faint(box: Box, ink: Ink) -> bool:
    """A stain or show-through: hardly any strong ink, and even its darkest is pale (a
    photograph's shadows go deep)."""
    x0, y0, x1, y1 = box
    if ink.binary:  # paper exactly white: no show-through or foxing to be faint with
        return False
    return (float(ink.strong[y0:y1, x0:x1].mean()) < C.faint_strong
            and float(np.percentile(ink.d[y0:y1, x0:x1], C.faint_percentile))
            < C.faint_darkest * ink.t)


def unprinted(ink: Ink) -> bool:
    """A page with no print on it, only what shows through from the other side (a blank
    verso behind a plate: the plate mirrored, faint and blurred) or stains: its darkest
    ink is paler than any printed page's (``MEASURES.unprinted`` levels below the paper).
    Paper scanned pure white counts too: a scan clipped to white still shows what lies
    behind."""
    return ink.darkest < C.unprinted


def at_edge(box: Box, ink: Ink) -> bool:
    """A narrow or a faint shape at the paper's edge: binding thread, a torn, curled or
    shadowed margin."""
    h, w = ink.shape
    x0, y0, x1, y1 = box
    m, far, narrow = C.edge_margin, C.edge_margin_far, C.edge_narrow
    side = (x0 <= m * w or x1 >= far * w) and x1 - x0 < narrow * w
    top = (y0 <= m * h or y1 >= far * h) and y1 - y0 < narrow * h
    near = x0 <= m * w or x1 >= far * w or y0 <= m * h or y1 >= far * h
    # a curled corner or a shadow: faint, thin ink; anything printed is denser
    return side or top or (near and float(ink.weak[y0:y1, x0:x1].mean()) < C.edge_faint)


def marked_text(box: Box, ink: Ink) -> bool:
    """Set text, whatever is inked over it (a stamp whose ring is not seen: grey, worn,
    or a black stamp's emblem): the lines beside the box run on through it, so its rows'
    darkness rises and falls with theirs (``MEASURES.lines_through``). A picture breaks
    the lines it is set among, and its rows follow its own drawing."""
    x0, y0, x1, y1 = box
    h, w = ink.shape
    if max(x1 - x0, y1 - y0) > C.stamp_box * max(h, w):
        return False
    beside = max(C.marked_beside_min_px, int(C.marked_beside * ink.th))
    strips = [(max(0, x0 - beside), x0), (x1, min(w, x1 + beside))]
    strips = [(a, b) for a, b in strips if b > a]
    if not strips or max(float(ink.zone[y0:y1, a:b].any(axis=1).mean())
                         for a, b in strips) < C.lines_beside:
        return False
    lines = sum(ink.glyphs[y0:y1, a:b].mean(axis=1) for a, b in strips)
    rows = ink.d[y0:y1, x0:x1].mean(axis=1, dtype=np.float32)
    return corr(rows, lines) >= C.lines_through
