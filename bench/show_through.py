"""Blank versos: how often the plate behind a blank page, showing through it, is cropped.

    python -m bench.show_through [--strengths 0.1 0.15 0.2]

A book's plates are printed on one side, and a library scans the blank back of each one
too: the plate shows through it, mirrored, blurred by the paper and a tenth to a fifth as
dark. A crop of that ghost is a defect a style LoRA learns. There are no such scans in
``../shared/data``, so each real page of ``figures/early`` and the Moreno chapbooks is
made into its own verso: mirrored, and inside its page extent blurred (a pixel at 800 px
across) and brought to ``strength`` of its depth below the paper (what lies outside the
page stays as it was), saved as JPEG and read through the reader's preview path.
Printed as pages with a crop and crops, per source and strength. A rule that drops faint
pages must not drop a printed page scanned washed out, so the printed pages are read
too with 40% of their contrast (on a light paper): their pictures found.
"""

from __future__ import annotations

import argparse
import io

import cv2
import numpy as np
from PIL import Image
from tqdm import tqdm

from archive import figures as F
from archive.figures import extent as page_extent
from bench.figure_eval import DATA, early_pages, jpeg_preview, moreno_pages, score, with_by_eye


def verso(rgb: np.ndarray, strength: float) -> np.ndarray:
    """The page as it shows through the blank side of its leaf: inside the page's extent
    (``page_extent``) its print faded toward its paper's colour; the rest of the scan
    (the bed, a chart, the facing page) as it was, mirrored with it."""
    rgb = np.ascontiguousarray(rgb[:, ::-1])
    h, w = rgb.shape[:2]
    x0, y0, x1, y1 = page_extent.find(rgb).page
    box = (slice(round(y0 * h), round(y1 * h)), slice(round(x0 * w), round(x1 * w)))
    page = cv2.GaussianBlur(rgb[box].astype(np.float32), (0, 0), max(1.0, w / 800))
    paper = np.percentile(page.reshape(-1, 3), 90, axis=0)
    out = rgb.copy()
    out[box] = (paper + (page - paper) * strength).clip(0, 255).astype(np.uint8)
    return out


def kept(rgb: np.ndarray) -> list[tuple[float, float, float, float]]:
    """The kept boxes of a scan, read as the reader reads its JPEG."""
    out = io.BytesIO()
    Image.fromarray(rgb).save(out, "JPEG", quality=90)
    return [r.box for r in F.figures(jpeg_preview(out.getvalue()))]


def washed_out(rgb: np.ndarray) -> np.ndarray:
    """The scan with 40% of its contrast, on a light paper."""
    return (rgb * 0.4 + 150).astype(np.uint8)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strengths", type=float, nargs="+", default=[0.1, 0.15, 0.2])
    args = ap.parse_args()
    sources = (("early printed books", with_by_eye(early_pages())),
               ("Moreno chapbooks", moreno_pages()))
    for label, pages in sources:
        counts = np.zeros((len(pages), len(args.strengths)), int)
        washed = []
        for i, page in enumerate(tqdm(pages, desc=label, leave=False)):
            with Image.open(DATA / page.name) as im:
                rgb = np.asarray(im.convert("RGB"))
            counts[i] = [len(kept(verso(rgb, s))) for s in args.strengths]
            washed.append((page.truth, kept(washed_out(rgb))))
        print(f"{label} ({len(pages)} pages, {sum(bool(p.truth) for p in pages)} with pictures), "
              "their blank versos:")
        for j, s in enumerate(args.strengths):
            print(f"  show-through at {s:.0%} of the print's depth: pages with a crop "
                  f"{int((counts[:, j] > 0).sum())}, crops {int(counts[:, j].sum())}")
        found = score(washed)
        print(f"  the printed pages washed out to 40% contrast: pictures found "
              f"{found['recall2']:.3f}, crops that are pictures {found['precision']:.3f}")


if __name__ == "__main__":
    main()
