"""A second bench book, of another make than ``bench.magazine``: a library's scan of an
octavo book with plates, written as an image-only PDF.

The magazine is one US-letter page size, drawn pages, one JPEG setting and a PDF written
by hand. A bench tuned on it alone can miss what another book costs (a reviewer's own
240-page scan measured figure mode at 3.9x-4.1x pdf2image where the magazine gave 5.3x),
so this book differs in every part of its make:

- pages: real text pages (the binarized DTA pages inked on paper, and the OCR-D scans as
  they are, ``pages/dta_text`` and ``pages/ocrd``) on octavo leaves whose size follows
  each scan (a hand-cropped scan is never the same size twice); about 30% plates, each a
  real picture cut from ``figures/`` (Moreno chapbooks, early prints, other sources) at
  its annotated box, printed on a paper-coloured page with a caption line; four plates in
  ten on a larger folded leaf, landscape where the picture is wide;
- JPEG: quality 70-92, 4:4:4, 4:2:2 or 4:2:0 chroma, about one page in seven progressive,
  greyscale text pages and some greyscale plates; each page scanned at 300 dpi and
  embedded 1:1, one full-page image a page, as library scans are;
- PDF: written by PyMuPDF (its image objects, content-stream arrays, a page tree
  rewritten in each of its incremental saves), not by hand. Each scan is named
  DeviceRGB or DeviceGray, as scanners and img2pdf write them; ``icc=True`` (``--icc``)
  keeps the ICCBased colour space PyMuPDF gives an inserted JPEG. That choice moves the
  peer, not us: poppler converts every pixel of an ICC-tagged scan through its colour
  transform, and ``pdftoppm -r 144`` took 6.3 s of CPU on 48 pages of this book with
  ICCBased scans, 1.7 s with the same scans as DeviceRGB/DeviceGray (load 3.8), so
  figure mode's ratio to pdf2image would flatter us on an ICC-tagged book.

The pages are drawn one at a time and saved in chunks, so the book streams to disk: at
most ``CHUNK`` page scans are in memory. The shared pictures and pages are read as bench
input only (see ``../shared/data/README.md`` for their licences); nothing is copied into
the repository. Seeded: the same call gives the same pages.

    python bench/second_book.py OUT.pdf [--pages 240] [--seed 0]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BORDE_SHARED_DATA", ROOT.parent / "shared" / "data"))

DPI = 300  # the scan's resolution; each page image is embedded 1:1 at it
OCTAVO_PT = 432  # a leaf's width in points (6 in); its height follows the scan's shape
FOLDED_PT = (576, 792)  # a folded plate's leaf (8 x 11 in), turned where the picture is wide
PLATE_SHARE = 0.3  # the reviewer's book: 30% plates
FOLDED_SHARE = 0.4  # plates on a larger folded leaf
# Some scans progressive, not most: a progressive page's 1/8 preview decode took 29 ms of
# CPU against 7 ms for a baseline one, and a 120-page book's build 6.4 s of CPU with 30% of
# them against 5.3 s with 15% and 4.8 s with none (python -m archive --workers 1, load 1.2)
PROGRESSIVE_SHARE = 0.15
# Pages held before each save: 16 scans of 0.75 MB on average (240 pages: 178 MB). The
# writer's peak RSS, 370 MB, is one folded plate's arrays, the same at 80 and 160 pages.
CHUNK = 16
MIN_PICTURE_PX = 150  # smaller annotated pictures would be blown up beyond recognition
PAPERS = ((238, 231, 212), (229, 227, 220), (233, 219, 192), (240, 236, 226))
TITLES = ("Ansicht der Stadt", "Le depart des pelerins", "Der heilige Antonius",
          "Vue du chateau", "Figura de la dama", "Die Jagd", "Les saisons", "El martirio",
          "Der Garten", "La procession", "Tabula geographica", "Das Gastmahl")


@dataclass(frozen=True)
class Leaf:
    """One page of the book as drawn: what it is, its size and its JPEG's settings."""

    kind: str  # "text" or "plate"
    source: str  # the shared file it was made from
    width_pt: float
    height_pt: float
    box: tuple[float, float, float, float] | None  # a plate's picture, fractions of the page
    crop: tuple[int, int, int, int] | None  # the picture's box in the shared scan's pixels
    grey: bool
    quality: int
    subsampling: int  # PIL's: 0 = 4:4:4, 1 = 4:2:2, 2 = 4:2:0
    progressive: bool


def pictures(data: Path = DATA) -> list[tuple[Path, tuple[int, int, int, int]]]:
    """Every annotated picture of ``figures/`` big enough to print as a plate: its scan and
    box in that scan's pixels, in a fixed order."""
    found = []
    for folder in ("moreno", "early", "other_sources"):
        table = data / "figures" / folder / "regions.csv"
        if not table.is_file():
            continue
        with open(table, newline="") as fh:
            for r in csv.DictReader(fh):
                if r["kind"] not in ("illustration", "picture"):
                    continue
                box = tuple(int(r[k]) for k in ("x0", "y0", "x1", "y1"))
                if min(box[2] - box[0], box[3] - box[1]) < MIN_PICTURE_PX:
                    continue
                # moreno names its files from the data root, the others from their folder
                name = r["file"]
                path = data / name if name.startswith("figures/") else table.parent / name
                found.append((path, box))
    return found


def text_pages(data: Path = DATA) -> list[Path]:
    """The real text pages: DTA's binarized pages and OCR-D's scans, in a fixed order."""
    pages = data / "pages"
    return sorted((pages / "dta_text").glob("*.png")) + sorted((pages / "ocrd").glob("*/*.jpg"))


def plan(pages: int, seed: int = 0, data: Path = DATA) -> list[Leaf]:
    """What each page will be, drawn before any pixel: exactly ``round(0.3 * pages)`` plates
    at random places, each a different picture while they last."""
    rng = np.random.default_rng(seed)
    texts, pics = text_pages(data), pictures(data)
    if not texts or not pics:
        raise SystemExit(f"no shared pages or pictures under {data}; set BORDE_SHARED_DATA")
    plates = set(rng.choice(pages, round(PLATE_SHARE * pages), replace=False).tolist())
    text_order = rng.permutation(len(texts))
    pic_order = rng.permutation(len(pics))
    leaves: list[Leaf] = []
    for i in range(pages):
        quality = int(rng.integers(70, 93))
        subsampling = int(rng.choice([0, 1, 2], p=[0.4, 0.1, 0.5]))
        progressive = bool(rng.random() < PROGRESSIVE_SHARE)
        jitter = 1 + rng.uniform(-0.02, 0.02)  # a scan cropped by hand
        if i in plates:
            done = sum(leaf.kind == "plate" for leaf in leaves)
            path, crop = pics[pic_order[done % len(pics)]]
            x0, y0, x1, y1 = crop
            aspect = (y1 - y0) / (x1 - x0)
            if rng.random() < FOLDED_SHARE:
                w, h = FOLDED_PT if aspect >= 0.85 else FOLDED_PT[::-1]
            else:
                w, h = OCTAVO_PT, OCTAVO_PT * 1.5
            w, h = w * jitter, h * jitter
            # the picture as large as the page lets it, above its caption
            scale = min(0.74 * w, 0.66 * h / aspect)
            pw, ph = scale, scale * aspect
            left, top = (w - pw) / 2, 0.42 * h - ph / 2
            box = (left / w, top / h, (left + pw) / w, (top + ph) / h)
            leaves.append(Leaf("plate", str(path.relative_to(data)), w, h, box, crop,
                               bool(rng.random() < 0.15), quality, subsampling, progressive))
        else:
            path = texts[text_order[i % len(texts)]]
            with Image.open(path) as im:
                sw, sh = im.size
            w = OCTAVO_PT * jitter
            grey = bool(rng.random() < (0.6 if path.suffix == ".png" else 0.3))
            leaves.append(Leaf("text", str(path.relative_to(data)), w, w * sh / sw, None,
                               None, grey, quality, subsampling, progressive))
    return leaves


def _pixels(leaf: Leaf) -> tuple[int, int]:
    return round(leaf.width_pt * DPI / 72), round(leaf.height_pt * DPI / 72)


def _paper(rng: np.random.Generator, size: tuple[int, int]) -> np.ndarray:
    """Paper as uint8 RGB: a tint, a slow mottle and a fine grain (a page's worth of
    float32 only twice, one plane each: a folded plate is 8 Mpx)."""
    w, h = size
    tint = np.array(PAPERS[int(rng.integers(len(PAPERS)))], np.float32) + rng.normal(0, 2, 3)
    mottle = rng.normal(0, 4, (h // 64 + 2, w // 64 + 2)).astype(np.float32)
    noise = np.asarray(Image.fromarray(mottle, "F").resize((w, h), Image.Resampling.BILINEAR))
    noise = noise + rng.standard_normal((h, w), dtype=np.float32) * 3
    paper = np.empty((h, w, 3), np.uint8)
    for c in range(3):
        np.clip(noise + tint[c], 0, 255, out=noise)
        paper[..., c] = noise
        noise -= tint[c]  # clipping moved a few grains; they stay within a level
    return paper


def _multiply(region: np.ndarray, by: np.ndarray) -> None:
    """``region`` (uint8) times ``by`` / 255 in place: ink printed on the paper."""
    region[...] = region.astype(np.uint16) * by // 255


def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def draw_page(leaf: Leaf, number: int, rng: np.random.Generator, data: Path = DATA
              ) -> Image.Image:
    """The page's scan at ``DPI``: a text page inked on paper, or a plate with its caption."""
    w, h = _pixels(leaf)
    with Image.open(data / leaf.source) as src:
        if leaf.kind == "text" and src.mode in ("1", "L"):  # binarized: ink it on paper
            ink = src.convert("L").resize((w, h), Image.Resampling.BILINEAR)
            t = np.asarray(ink.filter(ImageFilter.GaussianBlur(0.8)))
            dark = np.array([34, 28, 24]) + rng.integers(-4, 5, 3)
            arr = _paper(rng, (w, h))
            for c in range(3):  # paper where the page is white, the ink where it is black
                arr[..., c] = (arr[..., c] * t.astype(np.uint16) + dark[c] * (255 - t)) // 255
            img = Image.fromarray(arr, "RGB")
        elif leaf.kind == "text":  # a scan already: only its size changes
            img = src.convert("RGB").resize((w, h), Image.Resampling.BILINEAR)
        else:
            img = _plate(leaf, src, number, rng, (w, h))
    return img.convert("L") if leaf.grey else img


def _plate(leaf: Leaf, src: Image.Image, number: int, rng: np.random.Generator,
           size: tuple[int, int]) -> Image.Image:
    w, h = size
    x0, y0, x1, y1 = (round(v * s) for v, s in zip(leaf.box, (w, h, w, h), strict=True))
    picture = src.convert("RGB").crop(leaf.crop).resize((x1 - x0, y1 - y0),
                                                         Image.Resampling.BICUBIC)
    arr = _paper(rng, (w, h))
    if rng.random() < 0.5:  # the copper plate's mark, pressed into the paper round it
        m = round(0.03 * w)
        _multiply(arr[max(0, y0 - m):y1 + m, max(0, x0 - m):x1 + m], np.uint16(245))
    # printed, not pasted: the picture's own paper takes the page's tone
    _multiply(arr[y0:y1, x0:x1], np.asarray(picture))
    img = Image.fromarray(arr, "RGB")
    draw = ImageDraw.Draw(img)
    font = _font(max(18, h // 70))
    caption = f"Taf. {number}. {TITLES[int(rng.integers(len(TITLES)))]}"
    tw = draw.textlength(caption, font=font)
    draw.text(((w - tw) / 2, y1 + 0.035 * h), caption, font=font, fill=(40, 32, 28))
    return img.filter(ImageFilter.GaussianBlur(0.5))


def jpeg(img: Image.Image, leaf: Leaf) -> bytes:
    """The page's scan as its leaf's JPEG settings encode it."""
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=leaf.quality, progressive=leaf.progressive,
             subsampling=leaf.subsampling if img.mode == "RGB" else 0, dpi=(DPI, DPI))
    return buf.getvalue()


def write_second_book(out: str | Path, pages: int = 240, seed: int = 0,
                      data: Path = DATA, icc: bool = False) -> list[Leaf]:
    """Stream the book to ``out`` with PyMuPDF and return its leaves, page by page.

    PyMuPDF keeps a new document's streams in memory until it is saved, so every
    ``CHUNK`` pages the file is saved (incrementally after the first time), closed and
    opened again: the pages written are then read from disk, not held.
    """
    import pymupdf

    leaves = plan(pages, seed, data)
    out = Path(out)
    out.unlink(missing_ok=True)
    rng = np.random.default_rng(seed + 1)
    plate_no = 0
    doc = pymupdf.open()
    for i, leaf in enumerate(leaves):
        plate_no += leaf.kind == "plate"
        data_jpeg = jpeg(draw_page(leaf, plate_no, rng, data), leaf)
        page = doc.new_page(width=leaf.width_pt, height=leaf.height_pt)
        xref = page.insert_image(page.rect, stream=data_jpeg, keep_proportion=False)
        if not icc:  # the profile object stays, unused: a few KB a chunk
            doc.xref_set_key(xref, "ColorSpace", "/DeviceGray" if leaf.grey else "/DeviceRGB")
        del data_jpeg, page
        if (i + 1) % CHUNK == 0 or i + 1 == pages:
            if out.exists():
                doc.save(out, incremental=True, encryption=pymupdf.PDF_ENCRYPT_KEEP,
                         no_new_id=True)  # saveIncr(), less its random /ID
            else:
                doc.set_metadata({"producer": "bench.second_book (PyMuPDF)",
                                  "title": "A scanned octavo with plates"})
                doc.save(out, no_new_id=True)
            doc.close()
            pymupdf.TOOLS.store_shrink(100)
            if i + 1 < pages:
                doc = pymupdf.open(out)
    return leaves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--pages", type=int, default=240)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--icc", action="store_true",
                        help="keep PyMuPDF's ICCBased colour spaces (poppler pays for them)")
    args = parser.parse_args()
    leaves = write_second_book(args.out, args.pages, args.seed, icc=args.icc)
    size = Path(args.out).stat().st_size / 2**20
    sizes = {(round(x.width_pt), round(x.height_pt)) for x in leaves}
    print(f"{args.out}: {len(leaves)} pages ({sum(x.kind == 'plate' for x in leaves)} plates, "
          f"{sum(x.grey for x in leaves)} grey, {sum(x.progressive for x in leaves)} "
          f"progressive), {len(sizes)} page sizes, {size:.0f} MB")


if __name__ == "__main__":
    main()
