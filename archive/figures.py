"""Find the pictures on a page preview: engravings, photos, and ornaments to leave out.

Prototype.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image

KINDS = ("engraving", "photo", "ornament")
DEFAULT_MIN_AREA = 0.01


@dataclass(frozen=True)
class Region:
    box: tuple[float, float, float, float]
    score: float
    kind: str
    kept: bool
    reason: str


def _grey(page: Image.Image) -> np.ndarray:
    """Any PIL mode as a uint8 grey array; alpha is composited on white paper."""
    mode = page.mode
    if mode in ("I", "I;16", "I;16B", "I;16L", "I;16N", "F") or mode.startswith("I;"):
        arr = np.asarray(page, dtype=np.float64)
        hi = float(np.nanmax(arr)) if arr.size else 0.0
        scale = 1.0 if hi <= 255 else 255.0 / (65535.0 if hi <= 65535 else hi)
        return np.nan_to_num(arr * scale).clip(0, 255).astype(np.uint8)
    if "A" in mode or mode in ("P", "PA", "1"):
        rgba = page.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        page = Image.alpha_composite(white, rgba)
    return np.asarray(page.convert("L"), dtype=np.uint8)


def _paper(grey: np.ndarray) -> np.ndarray:
    """The local paper level: a max filter wide enough to step over glyphs and hatching."""
    h, w = grey.shape
    k = max(3, (max(h, w) // 24) | 1)
    small = cv2.resize(grey, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    ks = max(3, (k // 4) | 1)
    bg = cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_RECT, (ks, ks)))
    bg = cv2.blur(bg, (ks, ks))
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


@dataclass
class _Ink:
    """One page's ink, measured once and shared by every step."""

    d: np.ndarray  # darkness below the local paper, uint8
    t: float  # the strong-ink threshold on d
    strong: np.ndarray
    weak: np.ndarray
    labels: np.ndarray  # strong components
    stats: np.ndarray  # their x, y, w, h, area; row 0 the background
    th: float  # text height, px

    @property
    def shape(self) -> tuple[int, int]:
        return self.strong.shape


def _analyse(grey: np.ndarray) -> _Ink:
    d = np.clip(_paper(grey).astype(np.int16) - grey, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(d, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    t = float(np.clip(otsu, 25, 90))
    strong, weak = d > t, d > 0.5 * t
    n, labels, stats, _c = cv2.connectedComponentsWithStats(strong.astype(np.uint8),
                                                            connectivity=8)
    th = _text_height(stats[1:], strong.shape)
    return _Ink(d, t, strong, weak, labels, stats, th)


def _components(ink: np.ndarray, strong: np.ndarray | None = None) -> np.ndarray:
    """cv2 stats rows x, y, w, h, area; with ``strong``, only components holding strong ink."""
    n, lab, stats, _c = cv2.connectedComponentsWithStats(ink.astype(np.uint8), connectivity=8)
    keep = np.ones(n, bool)
    if strong is not None:
        keep = np.bincount(lab[strong], minlength=n) > 0
    h, w = ink.shape
    x, y, bw, bh = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    edge = (x == 0) | (y == 0) | (x + bw >= w) | (y + bh >= h)
    border = edge & ((bw >= 0.2 * w) | (bh >= 0.2 * h))  # scanner bed, book edges
    keep &= ~border
    keep[0] = False
    return stats[keep]


def _text_height(stats: np.ndarray, shape: tuple[int, int]) -> float:
    h, w = shape
    if len(stats) == 0:
        return max(2.0, h / 100)
    hs = stats[:, 3]
    ok = (hs >= 2) & (hs <= h / 15) & (stats[:, 2] <= w / 5)
    if ok.sum() < 20:
        return max(2.0, h / 100)
    return float(max(2.0, np.median(hs[ok])))


def features(box: tuple, ink: _Ink) -> dict[str, float]:
    """Cues that tell a picture from text, rules and ornaments, in scale-free units."""
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    h, w = ink.shape
    th = ink.th
    s = ink.strong[y0:y1, x0:x1]
    wk = ink.weak[y0:y1, x0:x1]
    d = ink.d[y0:y1, x0:x1].astype(np.float32)
    lab = ink.labels[y0:y1, x0:x1]
    hts = ink.stats[:, 3]
    n_s = max(1, int(s.sum()))
    big = (hts[lab] > 2.5 * th) & s
    small = (hts[lab] <= 1.5 * th) & s
    rows = s.mean(axis=1)
    r = rows - rows.mean()
    ac = np.correlate(r, r, "full")[len(r) - 1:]
    lo, hi = max(2, int(1.5 * th)), max(3, int(5 * th))
    period = float(ac[lo:hi].max() / (ac[0] + 1e-6)) if hi < len(ac) and ac[0] > 0 else 0.0
    flip = wk[:, ::-1]
    sym = float((wk & flip).sum() / max(1, (wk | flip).sum()))
    mid = ((d > 0.25 * ink.t) & (d < ink.t)).mean()
    return {
        "aspect": bw / max(1, bh), "area": bw * bh / (w * h), "hth": bh / th, "wth": bw / th,
        "big": float(big.sum() / n_s), "small": float(small.sum() / n_s), "period": period,
        "sym": sym, "dens": float(s.mean()), "weak": float(wk.mean()), "mid": float(mid),
    }


def _near(a, b, g: float) -> bool:
    return a[0] - g <= b[2] and b[0] - g <= a[2] and a[1] - g <= b[3] and b[1] - g <= a[3]


def _merge(boxes: list, g: float) -> list:
    """Union boxes that overlap or lie within g of each other, until none do."""
    boxes = [tuple(b) for b in boxes]
    changed = True
    while changed:
        changed = False
        out: list = []
        for b in boxes:
            for i, o in enumerate(out):
                if _near(b, o, g):
                    out[i] = (min(b[0], o[0]), min(b[1], o[1]), max(b[2], o[2]), max(b[3], o[3]))
                    changed = True
                    break
            else:
                out.append(b)
        boxes = out
    return boxes


def _absorb(boxes: list, stats: np.ndarray, g: float) -> list:
    """Grow each box over the small components that sit mostly inside it."""
    out = []
    for b in boxes:
        x0, y0, x1, y1 = b
        for x, y, bw, bh, _a in stats:
            ix = min(x + bw, b[2] + g) - max(x, b[0] - g)
            iy = min(y + bh, b[3] + g) - max(y, b[1] - g)
            if ix > 0 and iy > 0 and ix * iy >= 0.5 * bw * bh:
                x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x + bw), max(y1, y + bh)
        out.append((x0, y0, x1, y1))
    return out


def _split(box: tuple, strong: np.ndarray, weak: np.ndarray, th: float) -> list[tuple]:
    """Cut a box along a clean paper channel: adjacent woodcuts that nearly touch.

    A channel is a column (or row) crossed by almost no strong ink and little faint
    ink, with a sizeable picture on both sides; a scene's faint sky or floor is not.
    """
    x0, y0, x1, y1 = box
    s_sub, w_sub = strong[y0:y1, x0:x1], weak[y0:y1, x0:x1]
    h, w = s_sub.shape
    best = None
    for axis, length, span in ((0, w, h), (1, h, w)):
        margin = int(max(3 * th, 0.15 * length))
        if length - 2 * margin < 1:
            continue
        ps = s_sub.sum(axis=axis)[margin:length - margin] / span
        pw = w_sub.sum(axis=axis)[margin:length - margin] / span
        ok = (ps <= 0.025) & (pw <= 0.07)
        if ok.any():
            i = int(np.argmin(np.where(ok, pw, np.inf)))
            if best is None or pw[i] < best[0]:
                best = (pw[i], axis, margin + i)
    if best is None:
        return [box]
    _v, axis, cut = best
    if axis == 0:
        parts = [(x0, y0, x0 + cut, y1), (x0 + cut + 1, y0, x1, y1)]
    else:
        parts = [(x0, y0, x1, y0 + cut), (x0, y0 + cut + 1, x1, y1)]
    out = []
    for p in parts:
        t = _tighten(p, weak)
        if t is not None:
            out += _split(t, strong, weak, th)
    return out


def _tighten(box: tuple, ink: np.ndarray) -> tuple | None:
    """Trim a box to the ink inside it."""
    x0, y0, x1, y1 = box
    sub = ink[y0:y1, x0:x1]
    rows = np.flatnonzero(sub.any(axis=1))
    cols = np.flatnonzero(sub.any(axis=0))
    if not len(rows) or not len(cols):
        return None
    return (x0 + int(cols[0]), y0 + int(rows[0]), x0 + int(cols[-1]) + 1, y0 + int(rows[-1]) + 1)


def _lettering(box: tuple, stats: np.ndarray) -> bool:
    """A row of three or more glyphs of the box's height: a title line, not a picture."""
    x0, y0, x1, y1 = box
    h = y1 - y0
    inside = stats[(stats[:, 0] >= x0) & (stats[:, 1] >= y0) & (stats[:, 0] + stats[:, 2] <= x1)
                   & (stats[:, 1] + stats[:, 3] <= y1)]
    tall = inside[(inside[:, 3] >= 0.5 * h) & (inside[:, 2] <= 1.6 * inside[:, 3])]
    return len(tall) >= 3 and tall[:, 2].sum() >= 0.4 * (x1 - x0)


def _judge(box: tuple, ink: _Ink, min_area: float) -> Region:
    h, w = ink.shape
    th = ink.th
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    frac = (x0 / w, y0 / h, x1 / w, y1 / h)
    f = features(box, ink)
    if min(bw, bh) < 2 * th or max(bw, bh) > 8 * min(bw, bh):
        return Region(frac, 0.1, "ornament", False, "rule")
    if f["big"] < 0.5:
        return Region(frac, 0.1, "engraving", False, "text block")
    if f["hth"] < 10 and _lettering(box, ink.stats[1:]):
        return Region(frac, 0.1, "engraving", False, "lettering")
    if f["aspect"] > 3 or f["aspect"] < 0.25:
        return Region(frac, 0.3, "ornament", False, "ornament")
    if f["area"] < min_area:
        return Region(frac, 0.3, "engraving", False, "too small")
    return Region(frac, 0.8, "engraving", True, "")


def _boxes(ink: _Ink) -> list[tuple]:
    """Picture seeds grown into boxes, then cut apart where clean paper divides them."""
    th = ink.th
    stats = _components(ink.weak, ink.strong)
    big = stats[(stats[:, 3] >= 5 * th) & (stats[:, 2] >= 3 * th)]
    boxes = _merge([(x, y, x + bw, y + bh) for x, y, bw, bh, _a in big], 1.0)
    boxes = _absorb(boxes, ink.stats[1:], 1.0)
    out = []
    for b in boxes:
        out += _split(b, ink.strong, ink.weak, th)
    return [tuple(int(v) for v in b) for b in out]


def analyse(page: Image.Image) -> tuple[_Ink, list[tuple]] | None:
    """The page's ink and its candidate boxes in pixels (None for a page too small to read)."""
    grey = _grey(page)
    h, w = grey.shape
    if h < 16 or w < 16:
        return None
    ink = _analyse(grey)
    return ink, _boxes(ink)


def candidates(page: Image.Image, min_area: float = DEFAULT_MIN_AREA) -> list[Region]:
    found = analyse(page)
    if found is None:
        return []
    ink, boxes = found
    out = [_judge(b, ink, min_area) for b in boxes]
    out.sort(key=lambda r: (r.box[1], r.box[0]))
    return out


def figures(page: Image.Image, min_area: float = DEFAULT_MIN_AREA) -> list[Region]:
    return [r for r in candidates(page, min_area) if r.kept]
