"""Coloured ink on a page: library stamps, and red or blue lines of text (rubrics).

Why: a stamp is inked over or beside the print, in one colour (red, blue, violet) that is
neither the paper's nor the printer's black. In grey it is just more ink, and it glues
itself to the title or the woodcut it touches; in colour it stands apart. A rubric is a
line of text in red or blue: text, which a picture's box must never take in.

How: every colour is measured against the page's own paper (its median hue), so a cream,
grey or white paper means the same. Coloured ink is clearly more saturated than the
paper and darker than it. A stamp is a blob of pale coloured ink, its strokes closed
over, several text heights across, of one hue, and round or oval: almost
none of its ink lies outside the ellipse inscribed in its box. A painted initial is
square (ink in the corners) on a painted ground, and a miniature has many hues, so
neither is a stamp.
"""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures import levels
from archive.figures.config.ink import INK as C
from archive.figures.config.units import UNITS

Box = tuple[int, int, int, int]


def coloured(rgb: np.ndarray, paper: np.ndarray, chroma: float = C.chroma
             ) -> tuple[np.ndarray, np.ndarray]:
    """Mask of coloured ink, and every pixel's a/b offset from the paper (int16, 2 x H x W).

    Coloured ink is darker than the paper, far from it in hue and more saturated than
    it: black text on cream paper only looks bluer than the paper (it is less saturated),
    and brown ink, foxing and stains go the paper's own way. ``paper`` marks the pixels
    to take the paper's colour from.
    """
    lab = cv2.cvtColor(rgb, cv2.COLOR_RGB2LAB)
    if not paper.any():
        paper = np.ones(paper.shape, bool)
    pa = levels.quantile(lab[..., 1][paper], 0.5) - 128
    pb = levels.quantile(lab[..., 2][paper], 0.5) - 128
    a, b = lab[..., 1].astype(np.int16) - 128, lab[..., 2].astype(np.int16) - 128
    ab = np.stack([a - pa, b - pb])
    off2 = ab[0] * ab[0] + ab[1] * ab[1]
    tint2 = pa * pa + pb * pb
    own = np.sqrt((a * a + b * b).astype(np.float32))
    mask = ((off2 >= chroma * chroma) & (own >= np.sqrt(tint2) + C.colour_saturated)
            & (lab[..., 0] <= levels.quantile(lab[..., 0][paper], 0.5) - C.colour_darker))
    if tint2 >= C.paper_tint * C.paper_tint:  # tinted paper: deepening its tint is a stain
        cos = (ab[0] * pa + ab[1] * pb) / np.sqrt(np.maximum(1, off2 * tint2).astype(np.float32))
        mask &= cos <= np.cos(np.radians(C.paper_hue))
    return mask, ab


def vivid(mask: np.ndarray, ab: np.ndarray) -> np.ndarray:
    """The part of a ``coloured(..., chroma=INK.pale)`` mask that is ``INK.chroma`` from the
    paper."""
    return mask & (ab[0] * ab[0] + ab[1] * ab[1] >= C.chroma * C.chroma)


def has_colour(rgb: np.ndarray, paper: np.ndarray, chroma: float = C.chroma) -> bool:
    """Whether a page carries any coloured ink at all, from every fourth pixel each way
    (``INK.colour_sample``): most pages are black on paper, and they skip the rest."""
    s = C.colour_sample
    return bool(coloured(rgb[::s, ::s], paper[::s, ::s], chroma)[0].mean() >= C.colour_least)


def stamps(mask: np.ndarray, ab: np.ndarray, th: float) -> list[Box]:
    """Boxes (px) of the round or oval one-colour stamps among the coloured ink."""
    if not mask.any():
        return []
    h, w = mask.shape
    k = max(C.least_kernel, int(round(C.stamp_close * th)) | 1)
    blobs = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    contours, _h = cv2.findContours(blobs, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    least, largest = C.stamp_least * th, C.stamp_largest * max(h, w)
    squat, tall, most_vivid = C.stamp_aspect_least, C.stamp_aspect_most, C.stamp_vivid
    out = []
    for c in contours:
        x, y, bw, bh = cv2.boundingRect(c)
        if min(bw, bh) < least or max(bw, bh) > largest or not squat <= bw / bh <= tall:
            continue
        filled = np.zeros((bh, bw), np.uint8)
        cv2.drawContours(filled, [c], -1, 1, thickness=cv2.FILLED, offset=(-x, -y))
        ink = mask[y:y + bh, x:x + bw] & (filled > 0)
        box_ab = ab[:, y:y + bh, x:x + bw]
        painted = float(vivid(ink, box_ab).mean()) > most_vivid
        cut = (x == 0, y == 0, x + bw == w, y + bh == h)
        if not painted and _oval(filled > 0, cut) and _one_hue(box_ab[:, ink]):
            out.append((x, y, x + bw, y + bh))
    return out


def _one_hue(ab: np.ndarray) -> bool:
    """The hue angles of the ink (its a/b offsets from the paper) nearly all agree."""
    if not ab.size:
        return False
    angle = np.arctan2(ab[1], ab[0])
    return float(np.hypot(np.cos(angle).mean(), np.sin(angle).mean())) >= C.one_hue


def _oval(blob: np.ndarray, cut: tuple[bool, bool, bool, bool] = (False,) * 4) -> bool:
    """The filled blob is the ellipse inscribed in its box: hardly anything outside it (a
    square has a fifth in its corners), most of it covered. A blob cut by the image's
    edge (``cut``: left, top, right, bottom) has lost part of its box, so its own outline
    away from the cut is fitted too: a stamp half off the page is still round."""
    h, w = blob.shape
    yy, xx = np.ogrid[:h, :w]
    inside = ((xx + 0.5 - w / 2) / (w / 2)) ** 2 + ((yy + 0.5 - h / 2) / (h / 2)) ** 2 <= 1.0
    fitted = _fitted_ellipse(blob, cut) if any(cut) else None
    return any(_fills(blob, ell) for ell in (inside, fitted) if ell is not None)


def _fills(blob: np.ndarray, ellipse: np.ndarray) -> bool:
    area = float(blob.sum())
    return (float(blob[~ellipse].sum()) <= C.outside_ellipse * area
            and float(blob[ellipse].sum()) >= C.ellipse_filled * float(ellipse.sum()))


def _fitted_ellipse(blob: np.ndarray, cut: tuple[bool, bool, bool, bool]) -> np.ndarray | None:
    """The ellipse fitted to the blob's outline where no edge cut it, within its box."""
    h, w = blob.shape
    contours, _h = cv2.findContours(blob.astype(np.uint8), cv2.RETR_EXTERNAL,
                                    cv2.CHAIN_APPROX_NONE)
    pts = np.concatenate(contours).reshape(-1, 2) if contours else np.zeros((0, 2), int)
    keep = np.ones(len(pts), bool)
    for side, (axis, at) in zip(cut, ((0, 0), (1, 0), (0, w - 1), (1, h - 1)), strict=True):
        if side:
            keep &= np.abs(pts[:, axis] - at) > C.cut_edge
    if keep.sum() < C.fit_points:
        return None
    (cx, cy), (a, b), angle = cv2.fitEllipse(pts[keep].astype(np.float32))
    if not min(a, b) > 0 or max(a, b) > C.stamp_aspect_most * min(a, b):
        return None
    # where no edge cut the blob, its box is the ellipse's: a square's sides fit one
    # that bulges past them
    t = np.radians(angle)
    half_w = np.hypot(a / 2 * np.cos(t), b / 2 * np.sin(t))
    half_h = np.hypot(a / 2 * np.sin(t), b / 2 * np.cos(t))
    tol = max(C.fit_overhang_least, C.fit_overhang * max(h, w))
    past = (-(cx - half_w), -(cy - half_h), cx + half_w - (w - 1), cy + half_h - (h - 1))
    if any(not side and over > tol for side, over in zip(cut, past, strict=True)):
        return None
    out = np.zeros((h, w), np.uint8)
    cv2.ellipse(out, ((cx, cy), (a, b), angle), 1, thickness=-1)
    return out > 0


def rubrics(mask: np.ndarray, th: float) -> np.ndarray:
    """Lines of coloured text: glyph-tall shapes of coloured ink that run on along a row.

    A miniature's paint is broad areas, never a row of glyph-tall shapes, so it stays.
    A coloured rule, or the edge of a coloured frame, is one long thin shape: no text.
    """
    if not mask.any():
        return np.zeros_like(mask)
    k = max(C.least_kernel, int(round(C.rubric_close * th)))
    runs = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((1, k), np.uint8))
    n, lab, stats, _c = cv2.connectedComponentsWithStats(runs, connectivity=8)
    line = ((stats[:, 3] <= UNITS.glyph_h * th) & (stats[:, 3] >= C.rubric_least_h * th)
            & (stats[:, 2] >= C.rubric_least_w * th) & (stats[:, 2] >= C.rubric_long * stats[:, 3]))
    line[0] = False
    if line.any():  # glyphs: a line of text is several shapes, a rule one
        g, glab = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
        pairs = np.unique(np.stack([lab[mask], glab[mask]]), axis=1)
        line &= np.bincount(pairs[0], minlength=n) >= C.rubric_glyphs
    return line[lab]
