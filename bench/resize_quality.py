"""How close the archive's resize is to PIL's LANCZOS over the whole output, and how fast.

Until this version every crop was resized with ``Image.resize(LANCZOS)`` to its SDXL
bucket (about 31 ms a kept page on the bench magazine). Now an area average brings it
within 1.25 times its size and a bicubic step makes it (``archive.resize.resample``).
This script cuts the crops the pipeline cuts, from the same decode (the DCT scale the
crops need), on real shared pages and on the bench magazine's plates, and prints the
time of both and the PSNR of the new output against the LANCZOS one.

    python bench/resize_quality.py [--size 1024] [--pages 40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from archive import figures  # noqa: E402
from archive.pipeline import Options, _decode_need  # noqa: E402
from archive.reader import open_pdf, read_page  # noqa: E402
from archive.resize import crop_box, resample  # noqa: E402
from bench.figure_eval import DATA, early_pages, moreno_pages  # noqa: E402
from bench.magazine import page_pool, write_magazine_pdf  # noqa: E402
from buckets import cover_crop, nearest_bucket  # noqa: E402


def psnr(a: Image.Image, b: Image.Image) -> float:
    diff = np.asarray(a, np.float64) - np.asarray(b, np.float64)
    mse = float((diff * diff).mean())
    return 99.0 if mse == 0 else 10 * np.log10(255.0**2 / mse)


def crops(pdf: Path, size: int):
    """(crop, bucket size) for every kept or doubtful region, cut as the pipeline cuts it."""
    opts = Options(size=size).check()
    doc = open_pdf(pdf)
    try:
        for i in range(doc.page_count):
            page = read_page(doc, i, 2.0, opts.preview_side)
            boxes = [r.box for r in figures.candidates(page.preview)
                     if r.kept or r.score >= figures.REVIEW_FLOOR]
            if not boxes:
                continue
            img = page.full(_decode_need(page, boxes, opts)).convert("RGB")
            for box in boxes:
                crop = crop_box(img, box)
                bucket = nearest_bucket(crop.width, crop.height, size)
                yield crop, cover_crop(crop.width, crop.height, bucket)[0]
    finally:
        doc.close()


def measure(label: str, pdf: Path, size: int) -> None:
    rows = []
    for crop, target in crops(pdf, size):
        t = time.perf_counter()
        old = crop.resize(target, Image.Resampling.LANCZOS)
        t_old = time.perf_counter() - t
        t = time.perf_counter()
        new = resample(crop, target)
        t_new = time.perf_counter() - t
        rows.append((crop.width / target[0], t_old * 1000, t_new * 1000, psnr(new, old)))
    if not rows:
        print(f"{label}: no crops")
        return
    a = np.array(rows)
    print(f"{label}: {len(a)} crops to size {size} (source/output ratio median "
          f"{np.median(a[:, 0]):.2f}, range {a[:, 0].min():.2f}-{a[:, 0].max():.2f})")
    print(f"  LANCZOS {a[:, 1].mean():.1f} ms a crop, new {a[:, 2].mean():.1f} ms "
          f"({a[:, 1].sum() / a[:, 2].sum():.1f}x faster); PSNR of new against LANCZOS: "
          f"median {np.median(a[:, 3]):.1f} dB, 5th percentile {np.percentile(a[:, 3], 5):.1f}"
          f", min {a[:, 3].min():.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--pages", type=int, default=40, help="real pages of each shared set")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    from tests.pdf_factory import scans_pdf

    with tempfile.TemporaryDirectory(prefix="resize-quality-") as tmp:
        tmp = Path(tmp)
        magazine = tmp / "magazine.pdf"
        kinds = write_magazine_pdf(magazine, 40, page_pool())
        measure(f"bench magazine ({kinds.count('plate')} plates of 40 pages)", magazine,
                args.size)
        for name, pages in (("Moreno chapbooks", moreno_pages()),
                            ("early printed books", early_pages())):
            picked = [DATA / p.name for p in pages if p.truth][: args.pages]
            measure(f"{name} ({len(picked)} real pages)", scans_pdf(tmp / "p.pdf", picked),
                    args.size)
            for side in (512,) if args.size != 512 else ():
                measure(f"{name} at size {side}", tmp / "p.pdf", side)


if __name__ == "__main__":
    main()
