"""Synthetic test pages with exact picture boxes, built from real shared pages.

Real Moreno woodcuts (CC BY-SA 4.0, the Desenrollando el cordel project), trimmed to
their ink so the box is exact, are pasted into real text pages (DTA binarized book
pages, OCR-D grey and colour scans) the way books print them: a figure beside or
between text columns, two or three side by side nearly touching, a figure over a
caption line, a full-page plate with margins. Each layout comes in colour, grey and
binarized (the whole composite thresholded or dithered, as binarized book scans are).
Everything is seeded, so the same call gives the same pages.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from bench.figure_eval import DATA, Box, jpeg_preview, render_preview

LAYOUTS = ("inline", "beside", "pair", "triple", "caption", "plate")
MODES = ("colour", "grey", "binarized")
PAGE_SIDE = 1600  # composites are built at this long side (like the Moreno scans)
# OCR-D pages that are not plain text (a cover, a fern drawing, a vignette): no backgrounds
NOT_TEXT = ("FILE_0002_IMAGE", "0004", "bengel_abriss01")


@dataclass
class Composite:
    name: str
    layout: str
    mode: str
    groups: tuple[str, ...]  # the chapbooks the pasted figures come from
    image: Image.Image  # full resolution
    boxes: list[Box]  # exact, fractions of the page
    captions: list[Box]  # caption lines pasted under figures: no crop may take them in

    def preview(self, side: int | None = None) -> Image.Image:
        """As the reader would show it: a JPEG scan decoded small, a 1-bit page rendered."""
        if self.mode == "binarized":
            return render_preview(self.image, side)
        buf = io.BytesIO()
        self.image.save(buf, "JPEG", quality=90)
        return jpeg_preview(buf.getvalue(), side)


@dataclass
class _Figure:
    rgb: np.ndarray  # float32 0..1, paper normalised to 1
    group: str


def _trim(rgb: np.ndarray) -> np.ndarray | None:
    """Cut a woodcut crop to its ink so the pasted box is exact; normalise its paper to 1."""
    grey = rgb.mean(axis=2)
    paper = float(np.percentile(grey, 95))
    ink = (paper - grey) > 0.3 * (paper - float(np.percentile(grey, 3)))
    rows = np.flatnonzero(ink.sum(axis=1) > 0.01 * ink.shape[1])
    cols = np.flatnonzero(ink.sum(axis=0) > 0.01 * ink.shape[0])
    if len(rows) < 20 or len(cols) < 20:
        return None
    crop = rgb[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1]
    paper_rgb = np.percentile(rgb.reshape(-1, 3), 95, axis=0)
    return np.clip(crop / np.maximum(paper_rgb, 1.0), 0.0, 1.0).astype(np.float32)


def _figure_rows() -> list[dict[str, str]]:
    with open(DATA / "figures" / "moreno" / "regions.csv") as fh:
        return [r for r in csv.DictReader(fh) if r["kind"] != "none"]


def _load_figure(row: dict[str, str]) -> _Figure | None:
    with Image.open(DATA / row["file"]) as im:
        box = tuple(int(row[k]) for k in ("x0", "y0", "x1", "y1"))
        rgb = np.asarray(im.convert("RGB").crop(box), dtype=np.float32)
    fig = _trim(rgb)
    if fig is None:
        return None
    return _Figure(fig, Path(row["file"]).stem.split("Moreno_")[1].split("_")[0])


def figures() -> list[_Figure]:
    """Every annotated Moreno woodcut, trimmed, in file order."""
    return [f for f in map(_load_figure, _figure_rows()) if f is not None]


def text_pages() -> list[Path]:
    dta = sorted((DATA / "pages" / "dta_text").glob("*.png"))
    ocrd = sorted(p for p in (DATA / "pages" / "ocrd").glob("*/*.jpg")
                  if not any(k in str(p) for k in NOT_TEXT))
    return dta + ocrd


def _load_page(path: Path, mode: str, rng: random.Random) -> np.ndarray:
    """A text page as float RGB 0..1; binary DTA pages get paper tint and scan blur for colour."""
    with Image.open(path) as im:
        im = im.convert("RGB")
        f = PAGE_SIDE / max(im.size)
        if f < 1:  # the preview is a few hundred px: a full 2400 px page only costs time
            im = im.resize((round(im.width * f), round(im.height * f)), Image.Resampling.BOX)
        arr = np.asarray(im, dtype=np.float32) / 255.0
    if path.suffix == ".png" and mode != "binarized":
        arr = cv2.GaussianBlur(arr, (0, 0), 0.8)
        paper = np.array([0.93, 0.88, 0.78]) if mode == "colour" else np.array([0.9] * 3)
        arr = 0.12 + arr * (paper - 0.12)
    return arr.astype(np.float32)


def _text_block(page: np.ndarray) -> tuple[int, int, int, int]:
    """The ink extent of the page, ignoring scan borders and specks."""
    grey = page[::2, ::2].mean(axis=2)
    h, w = grey.shape
    paper = float(np.percentile(grey, 90))
    ink = grey < paper * 0.6
    ink[: h // 30] = ink[-h // 30:] = False
    ink[:, : w // 20] = ink[:, -w // 20:] = False
    # scanner bed and book edges are solid dark: text rows and columns are never that full
    ink[:, ink.mean(axis=0) > 0.4] = False
    ink[ink.mean(axis=1) > 0.4] = False
    ys, xs = np.nonzero(ink)
    if len(xs) < 100:
        return w // 5, h // 5, 2 * w - w // 5, 2 * h - h // 5
    x0, x1 = np.percentile(xs, [2, 98]) * 2
    y0, y1 = np.percentile(ys, [1, 99]) * 2
    return int(x0), int(y0), int(x1) + 2, int(y1) + 2


def _paper_colour(page: np.ndarray) -> np.ndarray:
    """The paper under the text, as a smooth map: clearing with it leaves no hard edge.

    A flat fill on a scan whose paper darkens toward the gutter drew a bright box,
    and the detector rightly saw the page around it as darker ink.
    """
    h, w = page.shape[:2]
    small = cv2.resize(page, (max(1, w // 8), max(1, h // 8)), interpolation=cv2.INTER_AREA)
    k = max(3, (max(small.shape[:2]) // 20) | 1)
    bg = cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    bg = cv2.GaussianBlur(bg, (0, 0), k)
    return cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)


def _line(page: np.ndarray, block: tuple[int, int, int, int], rng: random.Random) -> np.ndarray:
    """One text line cut from a page (to serve as a caption), bounded by blank rows."""
    x0, y0, x1, y1 = block
    grey = page[y0:y1, x0:x1].mean(axis=2)
    inked = (grey < np.percentile(grey, 90) * 0.6).sum(axis=1) > 0.02 * (x1 - x0)
    starts = [i for i in range(1, len(inked)) if inked[i] and not inked[i - 1]]
    for _ in range(20):
        if not starts:
            break
        s = rng.choice(starts)
        e = s
        while e < len(inked) and inked[e]:
            e += 1
        if 0.005 * page.shape[0] < e - s < 0.04 * page.shape[0]:
            return page[y0 + s:y0 + e, x0:x1]
    return page[y0:y0 + max(2, page.shape[0] // 80), x0:x1]


def _paste(page: np.ndarray, fig: np.ndarray, x: int, y: int, w: int, h: int) -> Box:
    """Multiply a resized woodcut onto the page; the box is its exact footprint."""
    img = Image.fromarray((fig * 255).astype(np.uint8)).resize((w, h), Image.Resampling.LANCZOS)
    f = np.asarray(img, dtype=np.float32) / 255.0
    page[y:y + h, x:x + w] *= f
    ph, pw = page.shape[:2]
    return (x / pw, y / ph, (x + w) / pw, (y + h) / ph)


def _clear(page: np.ndarray, paper: np.ndarray, x0: int, y0: int, x1: int, y1: int) -> None:
    h, w = page.shape[:2]
    ys, xs = slice(max(0, y0), min(h, y1)), slice(max(0, x0), min(w, x1))
    page[ys, xs] = paper[ys, xs]


def _fit(fig: np.ndarray, max_w: float, max_h: float) -> tuple[int, int]:
    fh, fw = fig.shape[:2]
    s = min(max_w / fw, max_h / fh)
    return max(8, int(fw * s)), max(8, int(fh * s))


def _layout(kind: str, page: np.ndarray, figs: list[_Figure], rng: random.Random,
            caption_src: np.ndarray) -> tuple[list[Box], list[Box]]:
    """Paste ``figs`` into ``page`` in place following layout ``kind``.

    Returns the figures' boxes and the caption lines' boxes.
    """
    h, w = page.shape[:2]
    paper = _paper_colour(page)
    bx0, by0, bx1, by1 = _text_block(page)
    bw, bh = bx1 - bx0, by1 - by0
    lh = max(4, int(0.015 * h))  # about one text line
    if kind == "plate":
        _clear(page, paper, 0, 0, w, h)
        m = rng.uniform(0.06, 0.12)
        fw, fh = _fit(figs[0].rgb, w * (1 - 2 * m), h * (1 - 2 * m) - 3 * lh)
        x, y = (w - fw) // 2, int(h * m)
        box = _paste(page, figs[0].rgb, x, y, fw, fh)
        caps = []
        if rng.random() < 0.5:
            cap = _line(caption_src, _text_block(caption_src), rng)
            caps.append(_put(page, cap, (w - cap.shape[1]) // 2, y + fh + lh))
        return [box], caps
    n = {"pair": 2, "triple": 3}.get(kind, 1)
    share = rng.uniform(0.35, 0.6) if kind in ("inline", "beside", "caption") else 1.0
    gap = int(w * rng.uniform(0.003, 0.012))
    target_h = int(bh * rng.uniform(0.18, 0.4))
    sizes = [_fit(f.rgb, (bw * share - gap * (n - 1)) / n, target_h) for f in figs[:n]]
    fh = min(s[1] for s in sizes)
    sizes = [_fit(f.rgb, 10 * w, fh) for f in figs[:n]]
    total = sum(s[0] for s in sizes) + gap * (n - 1)
    if total > bw:
        k = bw / total
        sizes = [(max(8, int(a * k)), max(8, int(b * k))) for a, b in sizes]
        fh = min(s[1] for s in sizes)
        total = sum(s[0] for s in sizes) + gap * (n - 1)
    y = by0 + int((bh - fh) * rng.uniform(0.1, 0.8))
    if kind == "beside":
        x = bx0 if rng.random() < 0.5 else bx1 - total
        _clear(page, paper, x - lh, y - lh, x + total + lh, y + fh + lh)
    else:  # the figure interrupts the text across the whole block
        x = bx0 + (bw - total) // 2
        _clear(page, paper, bx0 - 2, y - lh, bx1 + 2, y + fh + (4 if kind == "caption" else 1) * lh)
    boxes = []
    for f, (fw, fhh) in zip(figs[:n], sizes, strict=True):
        boxes.append(_paste(page, f.rgb, x, y + fh - fhh, fw, fhh))
        x += fw + gap
    caps = []
    if kind == "caption":
        cap = _line(caption_src, _text_block(caption_src), rng)
        cap = cap[:, : min(cap.shape[1], max(total, int(0.8 * bw)))]
        caps.append(_put(page, cap, bx0 + (bw - cap.shape[1]) // 2,
                         y + fh + int(lh * rng.uniform(0.4, 1.0))))
    return boxes, caps


def _put(page: np.ndarray, patch: np.ndarray, x: int, y: int) -> Box:
    """Darken the page with a text patch; its box, as fractions of the page."""
    h, w = page.shape[:2]
    ph, pw = patch.shape[:2]
    x, y = max(0, x), max(0, y)
    pw, ph = min(pw, w - x), min(ph, h - y)
    if pw > 0 and ph > 0:
        page[y:y + ph, x:x + pw] = np.minimum(page[y:y + ph, x:x + pw], patch[:ph, :pw])
    return (x / w, y / h, (x + max(0, pw)) / w, (y + max(0, ph)) / h)


def _finish(page: np.ndarray, mode: str, rng: random.Random) -> Image.Image:
    img = Image.fromarray((np.clip(page, 0, 1) * 255).astype(np.uint8), "RGB")
    if mode == "grey":
        return img.convert("L")
    if mode == "binarized":
        grey = img.convert("L")
        if rng.random() < 0.5:
            return grey.convert("1")  # Floyd-Steinberg dither
        return grey.point(lambda v: 255 if v >= 150 else 0).convert("1")
    return img


def sample(layout: str, mode: str, figure_rows: tuple[int, ...] = (4, 6),
           page: str = "dilthey_geisteswissenschaften_1883_0390", seed: int = 0) -> Composite:
    """One composite that loads only the figures and page it uses (cheap enough for tests).

    ``figure_rows`` index the annotated rows of regions.csv; ``page`` is a text page stem.
    """
    rng = random.Random(seed)
    rows = _figure_rows()
    figs = [f for f in (_load_figure(rows[i]) for i in figure_rows) if f is not None]
    path = next(p for p in text_pages() if p.stem == page)
    canvas = _load_page(path, mode, rng)
    boxes, caps = _layout(layout, canvas, figs + figs[:1] * 3, rng, canvas.copy())
    return Composite(f"{layout}-{mode}-{path.stem}", layout, mode,
                     tuple(f.group for f in figs), _finish(canvas, mode, rng), boxes, caps)


def build(per_cell: int = 6, seed: int = 0) -> Iterator[Composite]:
    """``per_cell`` pages for every layout x mode, deterministic for a given seed."""
    rng = random.Random(seed)
    figs = figures()
    pages = text_pages()
    dta = [p for p in pages if p.suffix == ".png"]
    scans = [p for p in pages if p.suffix != ".png"]
    for layout in LAYOUTS:
        for mode in MODES:
            for k in range(per_cell):
                pool = dta if mode == "binarized" or rng.random() < 0.5 else scans
                path = rng.choice(pool)
                page = _load_page(path, mode, rng)
                cap = _load_page(rng.choice(pool), mode, rng)
                chosen = rng.sample(figs, 3)
                boxes, caps = _layout(layout, page, chosen, rng, cap)
                yield Composite(f"{layout}-{mode}-{k}-{path.stem}", layout, mode,
                                tuple(f.group for f in chosen[:len(boxes)]),
                                _finish(page, mode, rng), boxes, caps)
