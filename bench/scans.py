"""Library scans made from real pages: the page on a scanner background, with exact boxes.

A library publishes the whole photograph: the book on a dark cloth or a grey or white
card, the facing page's edge, a colour chart and a shelf-mark label beside it, and its
round ownership stamp on the page. Here a real shared page (a Moreno chapbook page with
its annotated woodcuts, a composite from ``bench.composites`` with exact boxes, or a DTA
or OCR-D text page) is set on such a background, so the page's extent, its pictures and
the things that are not pictures are all known exactly:

- the background: a dark cloth, a mid-grey card or a white card, with the light falling
  off toward one side and a little noise;
- the facing page: a strip of another real page, darker (it curves away from the
  light), beside the page with a gutter shadow between (half of the scans);
- a colour chart (saturated patches and a grey wedge on a white strip, with a ruler) and
  a label (a white card with two lines cut from a real text page) on the background;
- a stamp: a real library stamp cut from a ``figures/early`` scan (CC0) and inked over
  the page's text, away from its pictures (half of the scans); half of them red as
  printed, half black (a real black stamp, or a red one in grey: the black stamps'
  own ring shape, not their colour, must tell them).

Everything is seeded, so the same call gives the same scans.
"""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import cv2
import numpy as np
from PIL import Image

from bench import composites
from bench.figure_eval import DATA, Box, jpeg_preview
from bench.figure_eval import area as box_area

BACKGROUNDS = ("dark", "grey", "white")
SOURCES = ("moreno", "composite", "text")
# Real stamps on early scans (file, box in px of the shipped 1000-px image), CC0.
STAMPS = (
    ("images/bpt6k1514025q_f9.jpg", (38, 610, 132, 704)),
    ("images/btv1b8626243d_f9.jpg", (483, 590, 575, 686)),
    ("images/bpt6k3041989v_f13.jpg", (222, 188, 390, 357)),
)
# A real black stamp (BnF, the Bibliothèque royale's, over a title page's arms), CC0.
# Half of the scan's stamps are inked black: one of these, or a red one re-inked in grey.
BLACK_STAMPS = (("images/bpt6k6127905_f2.jpg", (28, 332, 160, 464)),)
CHART = [(175, 54, 60), (70, 148, 73), (56, 61, 150), (231, 199, 31), (187, 86, 149),
         (8, 133, 161), (214, 126, 44), (80, 91, 166), (193, 90, 99), (94, 60, 108)]


@dataclass
class Scan:
    name: str
    background: str
    source: str
    image: Image.Image  # RGB, full resolution
    page: Box  # the printed page's extent, fractions of the image
    boxes: list[Box]  # the pictures, fractions of the image
    others: dict[str, Box] = field(default_factory=dict)  # chart, label, stamp, facing page
    stamp_ink: str = ""  # "red" or "black" when a stamp is inked on the page

    def preview(self, side: int | None = None) -> Image.Image:
        import io

        buf = io.BytesIO()
        self.image.save(buf, "JPEG", quality=90)
        return jpeg_preview(buf.getvalue(), side)


def _moreno_pages() -> list[tuple[str, list[tuple[int, int, int, int]]]]:
    rows: dict[str, list] = {}
    with open(DATA / "figures" / "moreno" / "regions.csv") as fh:
        for r in csv.DictReader(fh):
            boxes = rows.setdefault(r["file"], [])
            if r["kind"] != "none":
                boxes.append(tuple(int(r[k]) for k in ("x0", "y0", "x1", "y1")))
    return sorted(rows.items())


def _page(source: str, rng: random.Random) -> tuple[np.ndarray, list[Box], str]:
    """A real page as float RGB 0..1 at about 1000 px, its picture boxes (fractions)."""
    if source == "moreno":
        name, boxes = rng.choice([p for p in _moreno_pages() if p[1]])
        with Image.open(DATA / name) as im:
            w, h = im.size
            arr = _float(im.convert("RGB"))
        return arr, [(x0 / w, y0 / h, x1 / w, y1 / h) for x0, y0, x1, y1 in boxes], name
    if source == "composite":
        layout = rng.choice(("inline", "pair", "triple", "caption", "beside"))
        rows = tuple(rng.sample(range(len(composites._figure_rows())), 3))
        stem = rng.choice(composites.text_pages()).stem
        c = composites.sample(layout, "colour", rows, stem, rng.randrange(1 << 30))
        return _float(c.image.convert("RGB")), list(c.boxes), c.name
    path = rng.choice(composites.text_pages())
    with Image.open(path) as im:
        return _float(im.convert("RGB")), [], path.name


def _float(im: Image.Image, side: int = 1000) -> np.ndarray:
    f = side / max(im.size)
    if f < 1:
        im = im.resize((round(im.width * f), round(im.height * f)), Image.Resampling.BOX)
    return np.asarray(im, dtype=np.float32) / 255.0


def _background(kind: str, h: int, w: int, rng: random.Random) -> np.ndarray:
    base = {"dark": (0.06, 0.06, 0.1), "grey": (0.45, 0.45, 0.46), "white": (0.94, 0.94, 0.93)}
    ramp = np.linspace(1.0, rng.uniform(0.75, 0.95), w, dtype=np.float32)[None, :, None]
    if rng.random() < 0.5:
        ramp = ramp[:, ::-1]
    noise = np.random.default_rng(rng.randrange(1 << 30)).normal(0, 0.015, (h, w, 1))
    return np.clip(np.array(base[kind], np.float32) * ramp + noise, 0, 1).astype(np.float32)


def _chart(w: int, h: int) -> np.ndarray:
    """A colour chart: patches over a grey wedge on a white strip, ruler ticks under it."""
    out = np.full((h, w, 3), 0.96, np.float32)
    n = len(CHART)
    pw = w // (n + 2)
    for i, c in enumerate(CHART):
        out[h // 8: h // 2, pw * (i + 1): pw * (i + 2) - 2] = np.array(c) / 255.0
    for i in range(n):
        out[h // 2 + 2: 3 * h // 4, pw * (i + 1): pw * (i + 2)] = 0.95 - 0.9 * i / (n - 1)
    for x in range(pw, w - pw, max(2, pw // 4)):
        out[3 * h // 4 + 2: 3 * h // 4 + 2 + (h // 8 if (x // max(2, pw // 4)) % 4 else h // 5),
            x: x + 1] = 0.1
    return out


def _label(w: int, h: int, rng: random.Random) -> np.ndarray:
    """A white card with two lines of real print on it (a shelf mark)."""
    out = np.full((h, w, 3), 0.97, np.float32)
    src = _float(Image.open(rng.choice(composites.text_pages())).convert("RGB"))
    block = composites._text_block(src)
    for k in range(2):
        line = composites._line(src, block, rng)
        lh = min(h // 3, line.shape[0] * 2)
        scaled = cv2.resize(line, (int(w * 0.9), max(2, lh)), interpolation=cv2.INTER_AREA)
        y = h // 6 + k * (h // 2 - h // 12)
        paper = np.percentile(scaled.reshape(-1, 3), 90, axis=0)
        out[y: y + scaled.shape[0], w // 20: w // 20 + scaled.shape[1]] = np.clip(
            scaled / np.maximum(paper, 0.3) * 0.97, 0, 1)
    return out


def _stamp(rng: random.Random, side: int, black: random.Random | None = None) -> np.ndarray:
    """A real stamp, its paper turned white, inside a round mask: multiply it onto a page.

    With ``black`` (its own generator, so the scan's other draws stay as they were) the
    stamp is a black one, or a red one whose ink is turned to grey of the same darkness.
    """
    name, box = rng.choice(STAMPS)
    if black is not None:
        name, box = black.choice(STAMPS + BLACK_STAMPS)
    with Image.open(DATA / "figures" / "early" / name) as im:
        arr = _float(im.convert("RGB").crop(box), side=10_000)
    paper = np.percentile(arr.reshape(-1, 3), 90, axis=0)
    arr = np.clip(arr / np.maximum(paper, 0.3), 0, 1)
    if black is not None:  # the darkness of the red ink, in black
        arr = np.repeat(arr.min(axis=2, keepdims=True), 3, axis=2)
    arr = cv2.resize(arr, (side, side), interpolation=cv2.INTER_AREA)
    yy, xx = np.ogrid[:side, :side]
    inside = (xx - side / 2 + 0.5) ** 2 + (yy - side / 2 + 0.5) ** 2 <= (side / 2) ** 2
    arr[~inside] = 1.0
    return arr


def _stamp_place(page: np.ndarray, boxes: list[Box], side: int, rng: random.Random
                 ) -> tuple[int, int] | None:
    """Somewhere over the page's print (not its pictures) where a stamp fits."""
    h, w = page.shape[:2]
    for _ in range(40):
        x, y = rng.randrange(w // 10, max(w // 10 + 1, w - side - w // 10)), rng.randrange(
            h // 10, max(h // 10 + 1, h - side - h // 10))
        b = (x / w, y / h, (x + side) / w, (y + side) / h)
        if all(_overlap(b, t) == 0 for t in boxes):
            return x, y
    return None


def _overlap(a: Box, b: Box) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    return ix * iy


def scan(background: str, source: str, seed: int = 0, ink: str = "") -> Scan:
    """One library scan of a real page, every part of it with its exact box; ``ink``
    ("red" or "black") sets its stamp's ink, else drawn (its own draw: the rest of the
    scan is the same either way)."""
    rng = random.Random(seed)
    page, boxes, name = _page(source, rng)
    others: dict[str, Box] = {}
    ph, pw = page.shape[:2]
    if rng.random() < 0.5:  # a stamp inked over the print
        side = int(pw * rng.uniform(0.12, 0.18))
        at = _stamp_place(page, boxes, side, rng)
        if at is not None:
            x, y = at
            page = page.copy()
            black = random.Random(seed * 7919 + 1)
            ink = ink or ("black" if seed % 2 else "red")  # odd seeds: black
            page[y: y + side, x: x + side] *= _stamp(rng, side, black if ink == "black" else None)
            others["stamp"] = (x / pw, y / ph, (x + side) / pw, (y + side) / ph)
    facing = rng.random() < 0.5
    fw = int(pw * rng.uniform(0.06, 0.16)) if facing else 0
    top, left = int(ph * rng.uniform(0.04, 0.1)), int(pw * rng.uniform(0.06, 0.14)) + fw
    strip = int(ph * rng.uniform(0.16, 0.22))  # the chart and label under the page
    H, W = top + ph + strip + int(ph * 0.04), left + pw + int(pw * rng.uniform(0.06, 0.14))
    canvas = _background(background, H, W, rng)
    canvas[top: top + ph, left: left + pw] = page
    if facing:
        other, _b, _n = _page("text", rng)
        at = int(pw * rng.uniform(0.5, 0.7))  # a strip of its print, not only its margin
        edge = cv2.resize(other, (pw, ph), interpolation=cv2.INTER_AREA)[:, at - fw:at] * 0.72
        shade = np.linspace(1.0, 0.55, fw, dtype=np.float32)[None, :, None]
        canvas[top: top + ph, left - fw: left] = edge * shade
        others["facing page"] = ((left - fw) / W, top / H, left / W, (top + ph) / H)
    cw, ch = int(pw * 0.62), int(strip * 0.55)
    cy = top + ph + int(strip * 0.25)
    canvas[cy: cy + ch, left: left + cw] = _chart(cw, ch)
    others["chart"] = (left / W, cy / H, (left + cw) / W, (cy + ch) / H)
    lw = int(pw * 0.3)
    lx = left + cw + int(pw * 0.04)
    if lx + lw < W:
        canvas[cy: cy + ch, lx: lx + lw] = _label(lw, ch, rng)
        others["label"] = (lx / W, cy / H, (lx + lw) / W, (cy + ch) / H)

    def moved(b: Box) -> Box:
        return ((left + b[0] * pw) / W, (top + b[1] * ph) / H, (left + b[2] * pw) / W,
                (top + b[3] * ph) / H)

    if "stamp" in others:
        others["stamp"] = moved(others["stamp"])
    img = Image.fromarray((np.clip(canvas, 0, 1) * 255).astype(np.uint8), "RGB")
    page_box = (left / W, top / H, (left + pw) / W, (top + ph) / H)
    return Scan(f"{background}-{source}-{seed}-{name.split('/')[-1]}", background, source,
                img, page_box, [moved(b) for b in boxes if box_area(b) > 0], others,
                ink if "stamp" in others else "")


def target_frame(background: str, seed: int = 0) -> Scan:
    """A library's target frame: a colour chart (and on odd seeds a shelf-mark label
    under it) alone on the scanner bed, no page; ``page`` is the whole image and
    ``boxes`` is empty, the chart and label in ``others``."""
    rng = random.Random(seed)
    H, W = 1400, 1000
    canvas = _background(background, H, W, rng)
    cw, ch = int(W * rng.uniform(0.5, 0.8)), int(H * rng.uniform(0.08, 0.2))
    x, y = int((W - cw) * rng.uniform(0.2, 0.8)), int((H - ch) * rng.uniform(0.2, 0.8))
    canvas[y:y + ch, x:x + cw] = _chart(cw, ch)
    others = {"chart": (x / W, y / H, (x + cw) / W, (y + ch) / H)}
    if seed % 2:
        lw, lh, ly = int(W * 0.3), int(H * 0.08), y + ch + 40
        canvas[ly:ly + lh, x:x + lw] = _label(lw, lh, rng)
        others["label"] = (x / W, ly / H, (x + lw) / W, (ly + lh) / H)
    img = Image.fromarray((np.clip(canvas, 0, 1) * 255).astype(np.uint8), "RGB")
    return Scan(f"{background}-target-{seed}", background, "target", img, (0.0, 0.0, 1.0, 1.0),
                [], others)


def build(per_cell: int = 4, seed: int = 0) -> Iterator[Scan]:
    """``per_cell`` scans for every background x page source, deterministic for a seed."""
    for bi, background in enumerate(BACKGROUNDS):
        for si, source in enumerate(SOURCES):
            for k in range(per_cell):
                yield scan(background, source, seed * 1000 + bi * 100 + si * 10 + k)
