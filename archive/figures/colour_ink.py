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

Box = tuple[int, int, int, int]
CHROMA = 12.0  # Lab distance from the paper's colour of coloured ink
# A stamp's thin lines, shrunk to the preview, mix with the paper and the print under
# them: most of its pixels are paler than that. Its shape and one hue tell it apart, so
# it is looked for in the paler ink, its strokes closed over by three text heights.
PALE = 7.0
STAMP_CLOSE = 3.0
PAPER_HUE = 35.0  # degrees: ink that far from the paper's own tint at most is brown, a stain
ONE_HUE = 0.85  # mean resultant length of a stamp's hue angles (1: a single hue)
# most share of a stamp's blob outside its box's inscribed ellipse (a square: 0.21; the
# BnF's red stamp half over a printed rule, at the image's corner: 0.10-0.12)
OUTSIDE_ELLIPSE = 0.125
# most share of a stamp's box in vivid ink (CHROMA from the paper): a stamp's ink is pale
# lines, vivid over 0.23 of its box at most (real stamps 0.00-0.14, the composites' up to
# 0.23); a painted initial's ground is vivid over 0.42
STAMP_VIVID = 0.3
MIN_GLYPHS = 3  # separate shapes in a run of coloured ink that make it a line of text


def coloured(rgb: np.ndarray, paper: np.ndarray, chroma: float = CHROMA
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
    mask = ((off2 >= chroma * chroma) & (own >= np.sqrt(tint2) + 5)
            & (lab[..., 0] <= levels.quantile(lab[..., 0][paper], 0.5) - 8))
    if tint2 >= 25:  # a tinted paper: ink that only deepens its tint is brown, or a stain
        cos = (ab[0] * pa + ab[1] * pb) / np.sqrt(np.maximum(1, off2 * tint2).astype(np.float32))
        mask &= cos <= np.cos(np.radians(PAPER_HUE))
    return mask, ab


def vivid(mask: np.ndarray, ab: np.ndarray) -> np.ndarray:
    """The part of a ``coloured(..., chroma=PALE)`` mask that is CHROMA from the paper."""
    return mask & (ab[0] * ab[0] + ab[1] * ab[1] >= CHROMA * CHROMA)


def has_colour(rgb: np.ndarray, paper: np.ndarray, chroma: float = CHROMA) -> bool:
    """Whether a page carries any coloured ink at all, from every fourth pixel each way:
    most pages are black on paper, and they skip the rest."""
    return bool(coloured(rgb[::4, ::4], paper[::4, ::4], chroma)[0].mean() >= 0.0005)


def stamps(mask: np.ndarray, ab: np.ndarray, th: float) -> list[Box]:
    """Boxes (px) of the round or oval one-colour stamps among the coloured ink."""
    if not mask.any():
        return []
    h, w = mask.shape
    k = max(3, int(round(STAMP_CLOSE * th)) | 1)
    blobs = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    contours, _h = cv2.findContours(blobs, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for c in contours:
        x, y, bw, bh = cv2.boundingRect(c)
        if min(bw, bh) < 5 * th or max(bw, bh) > 0.3 * max(h, w) or not 0.6 <= bw / bh <= 1.7:
            continue
        filled = np.zeros((bh, bw), np.uint8)
        cv2.drawContours(filled, [c], -1, 1, thickness=cv2.FILLED, offset=(-x, -y))
        ink = mask[y:y + bh, x:x + bw] & (filled > 0)
        box_ab = ab[:, y:y + bh, x:x + bw]
        painted = float(vivid(ink, box_ab).mean()) > STAMP_VIVID
        cut = (x == 0, y == 0, x + bw == w, y + bh == h)
        if not painted and _oval(filled > 0, cut) and _one_hue(box_ab[:, ink]):
            out.append((x, y, x + bw, y + bh))
    return out


def _one_hue(ab: np.ndarray) -> bool:
    """The hue angles of the ink (its a/b offsets from the paper) nearly all agree."""
    if not ab.size:
        return False
    angle = np.arctan2(ab[1], ab[0])
    return float(np.hypot(np.cos(angle).mean(), np.sin(angle).mean())) >= ONE_HUE


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
    return (float(blob[~ellipse].sum()) <= OUTSIDE_ELLIPSE * area
            and float(blob[ellipse].sum()) >= 0.65 * float(ellipse.sum()))


def _fitted_ellipse(blob: np.ndarray, cut: tuple[bool, bool, bool, bool]) -> np.ndarray | None:
    """The ellipse fitted to the blob's outline where no edge cut it, within its box."""
    h, w = blob.shape
    contours, _h = cv2.findContours(blob.astype(np.uint8), cv2.RETR_EXTERNAL,
                                    cv2.CHAIN_APPROX_NONE)
    pts = np.concatenate(contours).reshape(-1, 2) if contours else np.zeros((0, 2), int)
    keep = np.ones(len(pts), bool)
    for side, (axis, at) in zip(cut, ((0, 0), (1, 0), (0, w - 1), (1, h - 1)), strict=True):
        if side:
            keep &= np.abs(pts[:, axis] - at) > 1
    if keep.sum() < 12:
        return None
    (cx, cy), (a, b), angle = cv2.fitEllipse(pts[keep].astype(np.float32))
    if not min(a, b) > 0 or max(a, b) > 1.7 * min(a, b):
        return None
    # where no edge cut the blob, its box is the ellipse's: a square's sides fit one
    # that bulges past them
    t = np.radians(angle)
    half_w = np.hypot(a / 2 * np.cos(t), b / 2 * np.sin(t))
    half_h = np.hypot(a / 2 * np.sin(t), b / 2 * np.cos(t))
    tol = max(2.0, 0.05 * max(h, w))
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
    k = max(3, int(round(1.5 * th)))
    runs = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((1, k), np.uint8))
    n, lab, stats, _c = cv2.connectedComponentsWithStats(runs, connectivity=8)
    line = ((stats[:, 3] <= 2.5 * th) & (stats[:, 3] >= 0.5 * th) & (stats[:, 2] >= 5 * th)
            & (stats[:, 2] >= 3 * stats[:, 3]))
    line[0] = False
    if line.any():  # glyphs: a line of text is several shapes, a rule one
        g, glab = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
        pairs = np.unique(np.stack([lab[mask], glab[mask]]), axis=1)
        line &= np.bincount(pairs[0], minlength=n) >= MIN_GLYPHS
    return line[lab]
