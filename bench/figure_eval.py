"""Measure archive.figures on the shared pages: recall, tightness, precision, text pages, speed.

Prototype.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import simplejpeg
from PIL import Image

from archive import figures as F

DATA = Path(os.environ.get("BORDE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
Box = tuple[float, float, float, float]


def preview_side() -> int:
    return int(getattr(F, "PREVIEW_SIDE", 360))


def jpeg_preview(data: bytes, side: int | None = None) -> Image.Image:
    """What the reader shows the detector for a JPEG scan: the smallest DCT scale >= side."""
    side = side or preview_side()
    w, h = Image.open(io.BytesIO(data)).size
    f = side / max(w, h)
    arr = simplejpeg.decode_jpeg(data, colorspace="RGB", min_width=max(1, int(w * f)),
                                 min_height=max(1, int(h * f)))
    return Image.fromarray(arr, "RGB")


def render_preview(img: Image.Image, side: int | None = None) -> Image.Image:
    """What the reader shows for a rendered (non-JPEG) page: an area resize to the side."""
    side = side or preview_side()
    f = side / max(img.size)
    size = (max(1, round(img.width * f)), max(1, round(img.height * f)))
    return img.convert("RGB").resize(size, Image.Resampling.BOX)


def load_preview(path: Path, side: int | None = None) -> Image.Image:
    if path.suffix.lower() in (".jpg", ".jpeg"):
        return jpeg_preview(path.read_bytes(), side)
    with Image.open(path) as im:
        return render_preview(im, side)


@dataclass
class Page:
    name: str
    group: str
    truth: list[Box]  # fractions of the page


def moreno_pages() -> list[Page]:
    rows: dict[str, list[Box]] = defaultdict(list)
    for r in csv.DictReader(open(DATA / "figures" / "moreno" / "regions.csv")):
        boxes = rows[r["file"]]
        if r["kind"] != "none":
            w, h = float(r["width"]), float(r["height"])
            boxes.append((float(r["x0"]) / w, float(r["y0"]) / h, float(r["x1"]) / w,
                          float(r["y1"]) / h))
    pages = []
    for f, boxes in sorted(rows.items()):
        group = Path(f).stem.split("Moreno_")[1].split("_")[0]
        pages.append(Page(f, group, boxes))
    return pages


def iou(a: Box, b: Box) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def match(truth: list[Box], pred: list[Box], thr: float = 0.5) -> list[tuple[int, int, float]]:
    """Greedy one-to-one matching by IoU, best pairs first."""
    pairs = sorted(((iou(t, p), i, j) for i, t in enumerate(truth) for j, p in enumerate(pred)),
                   reverse=True)
    used_t, used_p, out = set(), set(), []
    for v, i, j in pairs:
        if v < thr or i in used_t or j in used_p:
            continue
        used_t.add(i)
        used_p.add(j)
        out.append((i, j, v))
    return out


def area(b: Box) -> float:
    return (b[2] - b[0]) * (b[3] - b[1])


def score_pages(results: list[tuple[Page, list[F.Region]]]) -> dict[str, float]:
    n_t = n_t2 = hit = hit2 = n_kept = tp = 0
    ious: list[float] = []
    text_pages = text_clean = 0
    for page, regs in results:
        kept = [r.box for r in regs if r.kept]
        n_kept += len(kept)
        m = match(page.truth, kept)
        tp += len(m)
        ious += [v for _i, _j, v in m]
        matched = {i for i, _j, _v in m}
        for i, t in enumerate(page.truth):
            n_t += 1
            hit += i in matched
            if area(t) >= 0.02:
                n_t2 += 1
                hit2 += i in matched
        if not page.truth:
            text_pages += 1
            text_clean += not kept
    return {
        "pictures": n_t, "recall": hit / max(1, n_t), "pictures2": n_t2,
        "recall2": hit2 / max(1, n_t2), "median_iou": float(np.median(ious)) if ious else 0.0,
        "kept": n_kept, "precision": tp / max(1, n_kept), "text_pages": text_pages,
        "text_clean": text_clean / max(1, text_pages),
    }


def run_moreno(verbose: bool = False) -> list[tuple[Page, list[F.Region]]]:
    out = []
    for p in moreno_pages():
        prev = load_preview(DATA / p.name)
        regs = F.candidates(prev)
        out.append((p, regs))
        if verbose:
            kept = [r.box for r in regs if r.kept]
            m = match(p.truth, kept)
            fp = len(kept) - len(m)
            miss = len(p.truth) - len(m)
            if fp or miss or any(v < 0.85 for *_x, v in m):
                print(f"{Path(p.name).name:28s} truth {len(p.truth)} kept {len(kept)} "
                      f"miss {miss} fp {fp} ious {[round(v, 2) for *_x, v in m]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    t = time.perf_counter()
    res = run_moreno(args.verbose)
    print({k: round(v, 3) if isinstance(v, float) else v for k, v in score_pages(res).items()},
          f"{time.perf_counter() - t:.1f}s")


if __name__ == "__main__":
    main()
