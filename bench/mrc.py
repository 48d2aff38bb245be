"""archive.org's PDFs as they are: the figure finder on MRC pages.

archive.org's PDFs (archive-pdf-tools' ``recode_pdf``) are not one JPEG a page. Each page
is a text-only layer with the background under it (the page with its ink filled in from
around it, downsampled 3x, JPEG 2000) and the foreground over it (the ink's colours,
downsampled) through a 1-bit mask of the ink at full resolution (a Sauvola threshold of
the whole page, hOCR words or not). The reader cannot decode such a page itself:
MuPDF renders it. Here real shared pages (every third early-book scan, every fourth
chapbook page) are laid out that way, 3x their shipped size (a 300-400 dpi scan), and
the finder is scored on the same page as a plain JPEG, as an MRC page rendered at the
size its JPEG would preview at (what the reader does), and as an MRC page rendered at
PREVIEW_SIDE (what it did before).

    python -m bench.mrc [--every N] [--scale S] [--downsample D] [--rate R] [--grey]
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np
import pymupdf
from PIL import Image
from tqdm import tqdm

from archive import figures as F
from archive import reader
from bench.figure_eval import DATA, Page, early_pages, moreno_pages, score

DPI = 400  # of the 3x page: the rect's size in points follows from it
DOWNSAMPLE = 3  # recode_pdf's --bg-downsample as archive.org runs it
JP2_RATE = 30  # the layers' JPEG 2000 compression (1/30 of the raw size)


def _fill(rgb: np.ndarray, keep: np.ndarray, sigma: float) -> np.ndarray:
    """Every pixel not in ``keep`` from its kept neighbours (recode_pdf's optimise step,
    which keeps each layer smooth where the other one shows)."""
    img = rgb.astype(np.float32).reshape(*rgb.shape[:2], -1)  # a grey page: one channel
    w = keep.astype(np.float32)
    num = cv2.GaussianBlur(img * w[..., None], (0, 0), sigma).reshape(img.shape)
    den = cv2.GaussianBlur(w, (0, 0), sigma)[..., None]
    img[~keep] = (num / np.maximum(den, 1e-4))[~keep]
    return np.clip(img, 0, 255).astype(np.uint8).reshape(rgb.shape)


def mrc_layers(rgb: np.ndarray, ds: int = DOWNSAMPLE
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(background, foreground, mask) of an RGB page: the mask a Sauvola threshold of the
    whole page at full size, the two colour layers ``ds`` times smaller."""
    grey = (rgb if rgb.ndim == 2 else cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)).astype(np.float32)
    h, w = grey.shape
    win = (max(h, w) // 60) | 1
    mean = cv2.boxFilter(grey, -1, (win, win))
    sd = np.sqrt(np.maximum(cv2.boxFilter(grey * grey, -1, (win, win)) - mean * mean, 0))
    ink = grey < mean * (1 + 0.2 * (sd / 128 - 1))
    size = (max(1, w // ds), max(1, h // ds))
    bg = cv2.resize(_fill(rgb, ~ink, 10), size, interpolation=cv2.INTER_AREA)
    fg = cv2.resize(_fill(rgb, ink, 3), size, interpolation=cv2.INTER_AREA)
    return bg, fg, ink


def _encoded(arr: np.ndarray, fmt: str, **kw) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, fmt, **kw)
    return buf.getvalue()


def add_mrc_page(doc: pymupdf.Document, rgb: np.ndarray, dpi: int = DPI,
                 ds: int = DOWNSAMPLE, rate: int = JP2_RATE) -> None:
    """One page laid out as recode_pdf lays it (the mask as PNG, not JBIG2: MuPDF
    renders either the same)."""
    h, w = rgb.shape[:2]
    rect = pymupdf.Rect(0, 0, w * 72 / dpi, h * 72 / dpi)
    bg, fg, ink = mrc_layers(rgb, ds)
    page = doc.new_page(width=rect.width, height=rect.height)
    jp2 = {"quality_mode": "rates", "quality_layers": [rate]}
    page.insert_image(rect, stream=_encoded(bg, "JPEG2000", **jp2))
    page.insert_image(rect, stream=_encoded(fg, "JPEG2000", **jp2),
                      mask=_encoded(np.where(ink, 255, 0).astype(np.uint8), "PNG"))


def add_jpeg_page(doc: pymupdf.Document, rgb: np.ndarray, dpi: int = DPI) -> None:
    h, w = rgb.shape[:2]
    page = doc.new_page(width=w * 72 / dpi, height=h * 72 / dpi)
    page.insert_image(page.rect, stream=_encoded(rgb, "JPEG", quality=90))


def _scan(page: Page, scale: int, grey: bool = False) -> np.ndarray:
    with Image.open(DATA / page.name) as im:
        rgb = np.asarray(im.convert("L" if grey else "RGB"))
    if scale == 1:
        return rgb
    return cv2.resize(rgb, (rgb.shape[1] * scale, rgb.shape[0] * scale),
                      interpolation=cv2.INTER_CUBIC)


def _at_side(page: pymupdf.Page, side: int) -> Image.Image:
    """The page rendered at a long side of ``side``: the reader before 2026-12-05."""
    return reader._render(page, side / max(page.rect.width, page.rect.height))


def _kept(preview: Image.Image) -> list:
    return [r.box for r in F.figures(preview)]


def run(pages: list[Page], scale: int, folder: Path, ds: int = DOWNSAMPLE,
        rate: int = JP2_RATE, grey: bool = False) -> dict[str, list]:
    """Kept boxes of every page three ways, and the seconds each preview took."""
    plain, mrc = pymupdf.open(), pymupdf.open()
    for p in tqdm(pages, desc="laying out", unit="page"):
        rgb = _scan(p, scale, grey)
        add_jpeg_page(plain, rgb)
        add_mrc_page(mrc, rgb, ds=ds, rate=rate)
    for name, doc in (("plain", plain), ("mrc", mrc)):
        doc.save(folder / f"{name}.pdf", garbage=3)
        doc.close()
    plain, mrc = reader.open_pdf(folder / "plain.pdf"), reader.open_pdf(folder / "mrc.pdf")
    ways: dict[str, Callable[[int], Image.Image]] = {
        "one JPEG a page": lambda i: reader.read_page(plain, i).preview,
        "MRC, the JPEG's size": lambda i: reader.read_page(mrc, i).preview,
        f"MRC at {reader.PREVIEW_SIDE} px": lambda i: _at_side(mrc[i], reader.PREVIEW_SIDE),
    }
    out: dict[str, list] = {}
    for way, preview in ways.items():
        kept, seconds = [], 0.0
        for i in tqdm(range(len(pages)), desc=way, unit="page"):
            t = time.perf_counter()
            img = preview(i)
            seconds += time.perf_counter() - t
            kept.append((_kept(img), img.size))
        out[way] = [kept, seconds]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=int, default=3, help="every Nth early page (chapbooks: 4N/3)")
    ap.add_argument("--scale", type=int, default=3, help="the shipped pages enlarged this much")
    ap.add_argument("--downsample", type=int, default=DOWNSAMPLE, help="of the colour layers")
    ap.add_argument("--rate", type=int, default=JP2_RATE, help="JPEG 2000 compression, 1/N")
    ap.add_argument("--grey", action="store_true", help="grey scans (microfilm, --grayscale-pdf)")
    args = ap.parse_args()
    sets = {"early printed books": early_pages()[::args.every],
            "chapbooks": moreno_pages()[::max(1, 4 * args.every // 3)]}
    pages = [p for ps in sets.values() for p in ps]
    with tempfile.TemporaryDirectory() as tmp:
        out = run(pages, args.scale, Path(tmp), args.downsample, args.rate, args.grey)
    print(f"{len(pages)} pages at {args.scale}x their shipped size, {DPI} dpi; MRC layers "
          f"at 1/{args.downsample}, JPEG 2000 1/{args.rate}{', grey' if args.grey else ''}")
    for way, (kept, seconds) in out.items():
        sides = sorted(max(size) for _, size in kept)
        print(f"{way}: preview {seconds / len(pages) * 1000:.0f} ms a page, long side "
              f"{sides[0]}-{sides[-1]} px (median {sides[len(sides) // 2]})")
        at = 0
        for name, ps in sets.items():
            s = score([(p.truth, k) for p, (k, _) in zip(ps, kept[at:at + len(ps)], strict=True)])
            at += len(ps)
            print(f"  {name:20} found>=2% {s['recall2']:.3f} ({s['pictures2']})  median IoU "
                  f"{s['median_iou']:.3f}  precision {s['precision']:.3f} ({s['kept']} kept)  "
                  f"text pages clean {s['text_clean']:.3f} ({s['text_pages']})")


if __name__ == "__main__":
    main()
