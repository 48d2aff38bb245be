"""Candidate boxes: picture seeds grown into boxes, then cut apart and trimmed.

Why seeds: pictures hold connected shapes many text lines tall, and text never does at
preview scale. Seeds that touch merge, small shapes inside a box join it (feet, a hat
brim), a box is cut where set text runs through it and along clean paper channels
(adjacent woodcuts that nearly touch), and a stain, a stray speck or a line of text
glued on by show-through is trimmed off its edge.
"""

from __future__ import annotations

import functools
import itertools
import math

import cv2
import numpy as np

from archive.figures import components
from archive.figures.config.proposals import PROPOSALS as C
from archive.figures.config.units import UNITS
from archive.figures.config.verdicts import MEASURES
from archive.figures.frames import Picture, unframed
from archive.figures.ink import PARAMS, Box, Ink, intersection, runs, tighten
from archive.figures.measures import big_share, lettering, photo
from archive.figures.ornaments import frame_like, framed, ornament, symmetry

# The stage's constants (the stain's depth and tone, the border band's width, the rows
# of a broken frame and of a headpiece...) are fields of ``config.proposals.PROPOSALS``,
# each with where it was measured. A headpiece of cast ornaments: blocks in one row, each
# no deeper than ``head_deep`` text heights, ``head_gap`` text heights apart at most,
# with the pieces beside them in the same row, make a band (``band_aspect`` times as long
# as deep) that mirrors about its middle (``head_sym``).


def candidate_boxes(ink: Ink, picture: Picture) -> list[Box]:
    """Picture seeds grown into boxes, then cut apart where clean paper divides them;
    ``picture``: whether a frame's content would be kept (``frames.unframed``)."""
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
             if _band(b) and a >= C.band_ink_share * bw * bh and _border_wide(b, ink.shape)]
    boxes = _merge(boxes, g)
    boxes = _absorb(boxes, ink.stats[1:], g)
    boxes = _mended_frames(boxes, ink)
    boxes = _headpieces(boxes, stats, ink)
    h, w = ink.full
    out: list[Box] = []
    for b in boxes:
        # nothing to cut or trim
        speck = (b[2] - b[0]) * (b[3] - b[1]) < C.speck_area_share * h * w
        # a frame or band symmetric both ways is one ornament with whatever it holds
        # (a boxed table of contents): it is not cut where the text inside it runs
        if speck or ornament(b, ink, turned=False):
            out.append(b)
            continue
        for part in (q for p in _parts(b, ink) for q in unframed(p, ink, picture)):
            # mirror halves are one ornament (a tailpiece's wings), never two pictures; the
            # mirrors as scanned, not turned (``symmetry``): a part let whole here is not
            # trimmed of a stain nor cut along a channel, and a turn lifts two woodcuts in
            # a row, or a fleuron with its stain, over these thresholds
            whole = (ornament(part, ink, turned=False)
                     or symmetry(part, ink, turned=False)[0] > C.whole_mirror)
            out += [part] if whole else _split(part, ink)
    return _unslice(out, bands)


def _could_seed(ink: Ink) -> bool:
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
    (``page_frame_sparse`` of its box inked), holding ``page_frame_least_held`` other
    seeds or more, none of which fills most of it (``page_frame_fills``). A picture's own
    frame line holds the picture, which fills it."""
    x, y, w, h, a = (seeds[:, i].astype(np.int64) for i in range(5))
    # mostly inside (``page_frame_inside``): a frame cut by hand or warped on the scan is
    # not quite straight, and what it frames pokes out of its box here and there
    ix = (np.minimum(x[None, :] + w[None, :], x[:, None] + w[:, None])
          - np.maximum(x[None, :], x[:, None]))
    iy = (np.minimum(y[None, :] + h[None, :], y[:, None] + h[:, None])
          - np.maximum(y[None, :], y[:, None]))
    inside = (ix > 0) & (iy > 0) & (ix * iy >= C.page_frame_inside * (w * h)[None, :])
    np.fill_diagonal(inside, False)
    fills = inside & ((w * h)[None, :] >= C.page_frame_fills * (w * h)[:, None])
    return ((a < C.page_frame_sparse * w * h) & (inside.sum(axis=1) >= C.page_frame_least_held)
            & ~fills.any(axis=1))


def _mended_frames(boxes: list[Box], ink: Ink) -> list[Box]:
    """Boxes with the two halves of a broken frame made one (``_one_frame``), over and
    over: a cartouche's thin lines, broken on the scan, leave its halves two seeds, each
    no ornament alone (Moreno 279_4's "FIN." cartouche 0.75 degrees askew: two crops)."""
    out = list(boxes)
    while True:
        pair = next((p for p in itertools.combinations(out, 2) if _one_frame(*p, out, ink)),
                    None)
        if pair is None:
            return out
        out = [b for b in out if b not in pair] + [_union(*pair)]


def _one_frame(a: Box, b: Box, boxes: list[Box], ink: Ink) -> bool:
    """Two boxes side by side in one row (sharing ``row_share`` of the lower one's height),
    their gap crossed at both ends (``_crossed``) in ``gap_crossed_share`` of its columns and
    no other box in their union, which is no framed picture (``ornaments.framed``) and is
    symmetric both ways as a cartouche is (``ornaments.frame_like``, its mirrors as
    scanned). Two woodcuts in a row have bare paper between them; blocks that one frame
    holds (bpt6k533863 p12's scene and tower) are a picture, whatever its mirrors say."""
    left, right = sorted((a, b))
    if right[0] <= left[2] or not _same_row(a, b):
        return False
    u = _union(a, b)
    if any(c not in (a, b) and intersection(c, u) > 0 for c in boxes):
        return False
    gap = ink.weak[u[1]:u[3], left[2]:right[0]]
    return (float(_crossed(gap, ink, 0).mean()) >= C.gap_crossed_share
            and not framed(u, ink) and frame_like(u, ink, turned=False))


def _headpieces(boxes: list[Box], stats: np.ndarray, ink: Ink) -> list[Box]:
    """Blocks in a row that make one headpiece, each row made one box: a band of cast
    fleurons (repeated, or mirrored about its middle) whose stars and end pieces sit a
    little apart leaves two or three of its blocks seeds, each judged alone, and one of
    them read as an engraving (OCR-D bengel 1751 p7's band of fleurons)."""
    th = ink.th
    rows = _rows([b for b in boxes if b[3] - b[1] <= C.head_deep * th], th)
    bands = [_grown_row(functools.reduce(_union, row), stats, th) for row in rows]
    bands = [b for b in bands if b[2] - b[0] > UNITS.band_aspect * (b[3] - b[1])
             and symmetry(b, ink, turned=False)[0] > C.head_sym]
    return _unslice(boxes, bands) if bands else boxes


def _rows(boxes: list[Box], th: float) -> list[list[Box]]:
    """Groups of two boxes or more chained side by side: sharing ``row_share`` of the
    lower's height, ``head_gap`` text heights apart at most."""
    groups = [[b] for b in sorted(boxes)]
    merged = True
    while merged:
        merged = False
        for g1, g2 in itertools.combinations(groups, 2):
            if any(_beside(a, b, th) for a in g1 for b in g2):
                groups.remove(g2)
                g1.extend(g2)
                merged = True
                break
    return [g for g in groups if len(g) >= 2]


def _beside(a: Box, b: Box, th: float) -> bool:
    left, right = sorted((a, b))
    return -th <= right[0] - left[2] <= C.head_gap * th and _same_row(a, b)


def _same_row(a: Box, b: Box) -> bool:
    """Two boxes whose rows overlap over ``row_share`` of the lower one's height."""
    return min(a[3], b[3]) - max(a[1], b[1]) >= C.row_share * min(a[3] - a[1], b[3] - b[1])


def _grown_row(row: Box, stats: np.ndarray, th: float) -> Box:
    """The row grown sideways over the shapes within its height (``head_row_slack``)
    that lie ``head_gap`` text heights from it at most (a band's stars and end pieces),
    until none do."""
    x0, y0, x1, y1 = row
    slack = C.head_row_slack * th  # th / 2 as was: the same float
    ins = stats[(stats[:, 1] >= y0 - slack) & (stats[:, 1] + stats[:, 3] <= y1 + slack)]
    gap = C.head_gap * th
    while True:
        near = ((ins[:, 0] <= x1 + gap) & (ins[:, 0] + ins[:, 2] >= x0 - gap)
                & ((ins[:, 0] < x0) | (ins[:, 0] + ins[:, 2] > x1)))
        if not near.any():
            return x0, y0, x1, y1
        x0 = min(x0, int(ins[near, 0].min()))
        x1 = max(x1, int((ins[near, 0] + ins[near, 2]).max()))


def _union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def _unslice(boxes: list[Box], bands: list[Box]) -> list[Box]:
    """Each box that lies within a band (``unslice_inside`` of it), replaced by the
    whole band (once)."""
    least = C.unslice_inside
    out: list[Box] = []
    for b in boxes:
        whole = next((band for band in bands if _inside(b, band) >= least), b)
        if whole not in out:
            out.append(whole)
    return out


def _inside(part: Box, box: Box) -> float:
    """Share of ``part``'s area inside ``box``."""
    return intersection(part, box) / max(1, (part[2] - part[0]) * (part[3] - part[1]))


def _band(box: Box) -> bool:
    """More than ``band_aspect`` times as long as wide: a border band, never a picture's
    shape."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    return max(bw, bh) > UNITS.band_aspect * min(bw, bh)


def _border_wide(box: Box, shape: tuple[int, int]) -> bool:
    """No wider than a margin (``border_share`` of the page across it): a painted border
    is; a text column glued to the miniature over it at preview scale is not, and taken
    whole as a band it became one crop of both."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    return (bw <= C.border_share * shape[1]) if bh >= bw else (bh <= C.border_share * shape[0])


def _weak_components(ink: Ink) -> np.ndarray:
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
                    out[i] = _union(b, o)
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
        # small ones (``absorb_size``): a page frame's rules reach round the picture, and
        # half of their box may lie over it
        inside = (ix > 0) & (iy > 0) & (ix * iy >= C.absorb_inside * area) & (
            area <= C.absorb_size * (b[2] - b[0]) * (b[3] - b[1]))
        if inside.any():
            b = (min(b[0], int(x[inside].min())), min(b[1], int(y[inside].min())),
                 max(b[2], int(x1[inside].max())), max(b[3], int(y1[inside].max())))
        out.append(b)
    return out


def _split(box: Box, ink: Ink, depth: int = 0) -> list[Box]:
    """Cut a box along clean paper channels: adjacent woodcuts that nearly touch.

    Side-by-side cuts come first (chapbooks set two or three woodcuts in a row), then
    stacked ones; each part is split again, ``split_depth`` levels deep at most.
    """
    box = _trim_text(_trim_strays(_trim_stain(box, ink), ink), ink)
    x0, y0, x1, y1 = box
    # a headpiece is a row of blocks: one ornament band, however many blocks
    band = x1 - x0 > UNITS.band_aspect * (y1 - y0) and y1 - y0 < C.head_deep * ink.th
    for axis in (1,) if band else (0, 1):
        cuts = _channels(box, ink, axis)
        if cuts:
            parts = _pieces(box, ink.weak, axis, cuts)
            if depth >= C.split_depth or len(parts) < 2:
                return parts or [box]
            return [q for part in parts for q in _split(part, ink, depth + 1)]
    return [box]


def _parts(box: Box, ink: Ink) -> list[Box]:
    """A region cut where set text runs through it (``_cut_zone``).

    A region that reads as text as a whole (a table, a form, a page of text with its
    rules) keeps as parts only what is plainly printed picture: big shapes, densely
    inked; the rest stays in it, to be judged a text block with it.
    """
    parts = _cut_zone(box, ink)
    if len(parts) < 2 or big_share(box, ink) >= PARAMS["big"]:
        return parts
    pictures = [p for p in parts if big_share(p, ink) >= C.part_big_share
                and _weak_density(p, ink) >= C.part_weak_density]
    return pictures or [box]


def _weak_density(box: Box, ink: Ink) -> float:
    x0, y0, x1, y1 = box
    return float(ink.weak[y0:y1, x0:x1].mean())


def _cut_zone(box: Box, ink: Ink, axis: int | None = None) -> list[Box]:
    """The parts of a box between bands of set text two lines deep or more, rows first,
    then each part's columns; columns first where a column of text runs down the box's
    whole height (``_text_column``). ``axis``: the one to cut along, on the second pass.

    A woodcut set tight against its text, or an initial under it, joins the picture's
    shape; the text's rhythm tells where the picture ends. A part with no ink but text
    goes; a box that is all text stays whole, to be judged as a text block.
    """
    first = axis is None
    if first:
        axis = 0 if _text_column(box, ink) else 1
    x0, y0, x1, y1 = box
    texty = ink.zone[y0:y1, x0:x1].mean(axis=axis) >= C.texty_line_share
    edges = runs(texty, _two_lines(ink))
    if not edges or sum(hi - lo for lo, hi in edges) >= C.all_text_share * len(texty):
        return _cut_zone(box, ink, 1 - axis) if first else [box]
    cuts = [0, *[v for run in edges for v in run], len(texty)]  # parts between the bands
    out = []
    for lo, hi in zip(cuts[::2], cuts[1::2], strict=True):
        cell = (x0, y0 + lo, x1, y0 + hi) if axis == 1 else (x0 + lo, y0, x0 + hi, y1)
        part = tighten(cell, ink.weak & ~ink.text) if hi > lo else None
        if part is not None and _printed(part, ink):
            out += _cut_zone(part, ink, 1 - axis) if first else [part]
    return out or [box]


def _text_column(box: Box, ink: Ink) -> bool:
    """A column of set text runs down the box's whole height (``text_column_share`` of
    its rows): a page's text column glued to the miniature beside it. Cut by rows first,
    the lines the column's text runs on sliced the miniature across wherever the column
    filled half the box's width (btv1b8626772v f20 darker or noisier)."""
    x0, y0, x1, y1 = box
    full = ink.zone[y0:y1, x0:x1].mean(axis=0) >= C.text_column_share
    return bool(runs(full, _two_lines(ink)))


def _two_lines(ink: Ink) -> int:
    """Pixels of set text two lines deep (or a column two lines wide): a glyph's height
    (``UNITS.glyph_h``), a band of text that ``_cut_zone`` cuts at, and a column that
    makes ``_text_column``."""
    return max(C.two_lines_least_px, int(UNITS.glyph_h * ink.th))


def _printed(box: Box, ink: Ink) -> bool:
    """Some strong ink that is not text: a margin's faint shading or stain is not printed."""
    x0, y0, x1, y1 = box
    own = ink.strong[y0:y1, x0:x1] & ~ink.text[y0:y1, x0:x1]
    return int(own.sum()) >= C.printed_least_area * ink.th * ink.th


def _trim_strays(box: Box, ink: Ink) -> Box:
    """Drop a sliver of stray ink beyond an empty band at a box's edge (a neighbour's hat
    brim, a speck): under ``stray_ink_share`` of the box's ink, parted from it by a text
    height of paper."""
    gap = max(C.stray_gap_least_px, int(ink.th))
    stray = C.stray_ink_share
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
        head = band & (before[i] > 0) & (before[i] < stray * total)
        tail = band & (total - before[i + gap] > 0) & (total - before[i + gap] < stray * total)
        lo = int(i[head][0]) + gap if head.any() else 0
        hi = int(i[tail][-1]) if tail.any() else n
        if (lo, hi) != (0, n) and hi > lo:
            cell = (x0, y0 + lo, x1, y0 + hi) if axis == 0 else (x0 + lo, y0, x0 + hi, y1)
            box = tighten(cell, ink.weak) or box
    return box


def _trim_stain(box: Box, ink: Ink) -> Box:
    """Cut off a box's edge strip that holds no print: no row (column) of it with strong
    ink along ``stain_printed_share`` of the box, and the rest a stain (``_stain``) that
    the faint ink glued to a woodcut or a fleuron. Line prints only: a photograph's pale
    sky is tone too, and a box that is continuous tone without its strips (``photo``)
    keeps them."""
    whole = box
    for axis in (0, 1):  # rows, then columns
        x0, y0, x1, y1 = box
        s = ink.strong[y0:y1, x0:x1]
        printed = np.flatnonzero(s.sum(axis=1 - axis) > max(
            C.stain_printed_least_px, C.stain_printed_share * s.shape[1 - axis]))
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
            box = tighten(cell, ink.weak) or box
    return whole if box != whole and photo(box, ink) else box


def _stain(strip: np.ndarray, outer_first: bool, ink: Ink) -> bool:
    """Whether a strip of darkness (rows along the box's side, the outermost first or
    last) is a stain: ``stain_depth`` text heights deep at least, even its darkest faint
    (``stain_dark``), a tone (faint ink over ``stain_tone`` of it: a woodcut's pale part is
    thin lines on paper) and ragged at the box's edge (a photograph's tone runs to a
    straight edge there, inked along ``MEASURES.framed`` of the side; a blot's does
    not)."""
    if (len(strip) < C.stain_depth * ink.th
            or np.percentile(strip, C.stain_dark_percentile) >= C.stain_dark * ink.t):
        return False
    faint = strip > C.stain_faint * ink.t
    edge = faint[:max(1, round(ink.px))] if outer_first else faint[-max(1, round(ink.px)):]
    return (float(faint.mean()) >= C.stain_tone
            and float(edge.any(axis=0).mean()) < MEASURES.framed)


def _trim_text(box: Box, ink: Ink) -> Box:
    """Cut a title or text line off a box's edge when show-through glued it on.

    Faint verso text can bridge the paper between a woodcut and its caption; strong ink
    cannot. A strip beyond a band free of strong ink that reads as text (a row of big
    letters, or a line or two of glyph-sized shapes) is not part of the picture.
    """
    for _ in range(C.text_trim_rounds):
        cut = _text_strip(box, ink)
        if cut is None:
            return box
        box = tighten(cut, ink.weak) or box
    return box


def _text_strip(box: Box, ink: Ink) -> Box | None:
    """The box without a text strip at its top or bottom, or None when there is none.

    Rows only: captions and titles sit under or over pictures, within
    ``text_strip_reach`` of its height from its edge.
    """
    x0, y0, x1, y1 = box
    s = ink.strong[y0:y1, x0:x1]
    h, w = s.shape
    free = s.sum(axis=1) <= C.text_free_row * w
    reach = C.text_strip_reach
    for end in (True, False):
        # 1 - 0.4 is 0.6 to the bit, as the bottom's reach was written
        rng = range(h - 1, int((1 - reach) * h), -1) if end else range(0, int(reach * h))
        prev_free = False
        for i in rng:  # from the edge inward, the inner row of each free band
            if free[i] and not prev_free:
                strip, keep = _halves(box, i, end)
                t = tighten(strip, ink.strong)
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


def _texty(strip: Box, ink: Ink) -> bool:
    """A title (a row of big letters) or a line or two of text, not a slice of picture."""
    x0, y0, x1, y1 = strip
    if y1 - y0 < C.text_line_depth * ink.th:
        return False
    if lettering(strip, ink):
        return True
    # a set line is dense in black and made of glyphs; a pale slice of picture is neither
    line = ink.strong[y0:y1, x0:x1]
    return (y1 - y0 <= C.text_strip_deep * ink.th and float(line.mean()) >= C.text_line_ink
            and big_share(strip, ink) < C.text_line_big)


def _channels(box: Box, ink: Ink, axis: int) -> list[int]:
    """Offsets of the channels across a box (``_channels_in``). On a page a little askew
    (under ``figures.SKEW_LEVEL``, so not levelled) a channel runs askew as much, and a
    channel one or two pixels wide is crossed by ink in every column: the box is also read
    sheared by the page's skew (``Ink.skew``, at the box's middle), and the reading with
    more channels is taken. Not that one alone: the skew is read from the text lines, and
    a woodcut's block need not follow them (Moreno 285_1's woodcuts stand upright on a page
    whose lines read 1.75 degrees askew)."""
    x0, y0, x1, y1 = box
    d, weak = ink.d[y0:y1, x0:x1], ink.weak[y0:y1, x0:x1]
    tied = framed(box, ink)
    cuts = _channels_in(d, weak, ink, axis, tied)
    if not ink.skew:
        return cuts
    h, w = d.shape
    k = math.tan(math.radians(ink.skew))
    shear = (np.float32([[1, k, -k * h / 2], [0, 1, 0]]) if axis == 0
             else np.float32([[1, 0, 0], [-k, 1, k * w / 2]]))
    sheared = _channels_in(
        cv2.warpAffine(np.ascontiguousarray(d), shear, (w, h), flags=cv2.INTER_NEAREST),
        cv2.warpAffine(weak.astype(np.uint8), shear, (w, h), flags=cv2.INTER_NEAREST) > 0,
        ink, axis, tied)
    return sheared if len(sheared) > len(cuts) else cuts


def _channels_in(d: np.ndarray, weak: np.ndarray, ink: Ink, axis: int,
                 tied: bool = False) -> list[int]:
    """Offsets of the channels across a box's darkness ``d`` and weak ink, one per run of
    qualifying columns (or rows).

    A channel's darkness is a small fraction of the box's median column, and little
    faint ink crosses it: a scene's pale sky is darker than that relative to its own
    picture, so it stays whole. All channels are found at once, against the same
    median, so a row of three woodcuts is judged as a row. In a framed box (``tied``), a
    line inked at both of its ends is no channel (``_crossed``).
    """
    dark = np.where(d >= C.channel_dark * ink.t, d, 0).astype(np.float32)
    span, length = d.shape if axis == 0 else d.shape[::-1]
    # side by side, a narrow figure may sit by a wide scene; stacked parts are big
    margin = int(max(C.channel_margin * ink.th,
                     (C.channel_margin_across if axis == 0 else C.channel_margin_down) * length))
    if length - 2 * margin < 1:
        return []
    prof = dark.sum(axis=axis)
    rel = prof / max(1e-6, float(np.median(prof)))
    pw = weak.sum(axis=axis) / span
    ok = (rel <= C.channel_rel_dark) & (pw <= C.channel_weak)
    if tied:
        ok &= ~_crossed(weak, ink, axis)
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


def _crossed(weak: np.ndarray, ink: Ink, axis: int) -> np.ndarray:
    """Which lines across the box (columns for ``axis`` 0, rows for 1) have ink within a
    text height of both of their ends. In a framed box (``ornaments.framed``) that ink is
    its frame, or a ground drawn to it: a clean gap it runs across is inside one picture
    (Moreno 122_1: a curtain's edge on bare paper, from the top frame line down to the
    floor, split its woodcut in two at 470 and 520 px and under 4 of the robustness
    bench's scans). Two framed woodcuts side by side have a gap of paper between their
    frames, at their ends too. Framed only: a box grown over the page's edge and its
    text (a page extent lost to sensor noise) has that edge's line at one end of a clean
    gap and a line of text at the other."""
    e = max(C.crossed_end_least_px, math.ceil(ink.th))
    if axis == 0:
        return weak[:e].any(axis=0) & weak[-e:].any(axis=0)
    return weak[:, :e].any(axis=1) & weak[:, -e:].any(axis=1)


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
            _overlap(a, b) <= C.piece_overlap for a, b in zip(out, out[1:], strict=False)):
        return out
    straight = []
    for lo, hi in zip(edges, edges[1:], strict=False):
        cell = (x0 + lo, y0, x0 + hi, y1) if axis == 0 else (x0, y0 + lo, x1, y0 + hi)
        t = tighten(cell, weak)
        if t is not None:
            straight.append(t)
    return straight


def _overlap(a: Box, b: Box) -> float:
    """Intersection over the smaller box's area."""
    small = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return intersection(a, b) / max(1, small)
