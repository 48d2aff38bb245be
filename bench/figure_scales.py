"""How far archive.figures holds when the same page reaches it at another size.

    python -m bench.figure_scales [--source early|moreno|both] [--sides 300 340 ...]

The reader's preview is the smallest DCT scale of the scan at or above PREVIEW_SIDE,
so its long side is anywhere from 360 to 720 px, by the scan's resolution; and a book
set in larger type shows the finder larger text at the same side. The shared early
books are all 1000-px images, previewed at 375 px, and the rules were written looking
at those previews: a number measured at that one size says little of a library whose
scans are another size. Here every labelled page is brought (area resize from its
full image) to each long side and scored as ``bench.figure_eval`` with the shipped
PARAMS, then the mean and the worst over the sides ("text clean" counts the early books'
decorative pages with their text pages, as ``figure_eval`` does; the last column the
pages labelled text alone). Test use only: never tune on it.
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import cv2
import numpy as np
from PIL import Image

from archive import figures as F
from bench.figure_eval import DATA, Box, Page, early_pages, moreno_pages, score, with_by_eye

SIDES = (300, 340, 375, 420, 470, 520, 600, 700, 800)


def at_side(page: Page, side: int) -> Image.Image:
    """The page's full image, area-resized to ``side`` px on its long side."""
    with Image.open(DATA / page.name) as im:
        a = np.asarray(im.convert("RGB"))
    h, w = a.shape[:2]
    f = side / max(h, w)
    return Image.fromarray(cv2.resize(a, (max(1, round(w * f)), max(1, round(h * f))),
                                      interpolation=cv2.INTER_AREA))


def _kept(job: tuple[Page, int]) -> list[Box]:
    page, side = job
    cv2.setNumThreads(1)
    return [r.box for r in F.figures(at_side(page, side))]


def report(label: str, pages: list[Page], sides: list[int], pool: ProcessPoolExecutor
           ) -> None:
    """One row per side, then their mean and worst."""
    print(f"{label} ({len(pages)} pages), shipped PARAMS, area-resized to each long side:")
    labelled = any(p.label == "text" for p in pages)  # figures/early: text apart too
    print(f"  {'side':>6} {'found>=2%':>9} {'IoU':>6} {'precision':>14} {'text clean':>14}"
          + ("  labelled text clean" if labelled else ""))
    rows = []
    for side in sides:
        kept = list(pool.map(_kept, [(p, side) for p in pages], chunksize=4))
        s = score((p.truth, k) for p, k in zip(pages, kept, strict=True))
        text = [not k for p, k in zip(pages, kept, strict=True) if p.label == "text"]
        s["labelled_text"] = sum(text) / max(1, len(text))
        rows.append(s)
        print(f"  {side:>6} {s['recall2']:>9.3f} {s['median_iou']:>6.3f} "
              f"{s['precision']:>8.3f} ({s['kept']:>3}) {s['text_clean']:>8.3f} "
              f"({s['text_pages']})" + (f"  {sum(text):>10}/{len(text)}" if labelled else ""))
    keys = ("recall2", "median_iou", "precision", "text_clean", "labelled_text")
    for name, pick in (("mean", np.mean), ("worst", min)):
        v = {k: float(pick([r[k] for r in rows])) for k in keys}
        print(f"  {name:>6} {v['recall2']:>9.3f} {v['median_iou']:>6.3f} "
              f"{v['precision']:>8.3f} {'':5} {v['text_clean']:>8.3f}"
              + (f"  {'':5}{v['labelled_text']:>10.3f}" if labelled else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=("early", "moreno", "both"), default="both")
    ap.add_argument("--sides", nargs="*", type=int, default=list(SIDES))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    with ProcessPoolExecutor(args.workers) as pool:
        if args.source in ("early", "both"):
            pages = early_pages()
            report("Early printed books", pages, args.sides, pool)
            report("Early printed books, the woodcuts the labels leave unboxed counted "
                   "(BY_EYE)", with_by_eye(pages), args.sides, pool)
        if args.source in ("moreno", "both"):
            report("Moreno chapbooks", moreno_pages(), args.sides, pool)


if __name__ == "__main__":
    main()
