"""Open books: two facing pages of one book scanned as one image, on a dark bed.

    python -m bench.spreads [--scales 1 3]

Some libraries publish the opening, not the page: both pages in one scan, the bed round
them. There are no such scans in ``../shared/data``, so each book's pages (``figures/early``
and the Moreno chapbooks, grouped by book) are paired in order and set side by side at one
height on a dark bed (6% of it round them), saved as JPEG and read through the reader's
preview path, its finer decode included (``figures.find`` with the closer). Each page is
cut to its own paper first (``own_page``). ``--scales``: the pair at the pages' shipped
size (about 1,000 px tall: each page of the opening is about 280 px tall in the preview)
and at three times it (a 300-dpi opening, 4,500 px across: its 1/8-scale decode gives
each page about 375 px, as a single page's preview). Printed per source and scale as
``bench.figure_eval`` scores, with the openings that missed a picture or kept a false crop.
"""

from __future__ import annotations

import argparse
import io
from collections.abc import Iterator

import numpy as np
from PIL import Image

from archive.figures import extent as page_extent
from bench.figure_eval import (
    DATA,
    Box,
    Page,
    early_pages,
    fmt,
    jpeg_preview,
    kept_boxes,
    match,
    moreno_pages,
    score,
)

BED, BED_LEVEL = 0.06, 25  # the bed round the opening, of its height; its grey level


def pairs(pages: list[Page]) -> Iterator[tuple[Page, Page]]:
    """Each book's pages two by two, in order (a last odd page left out)."""
    books: dict[str, list[Page]] = {}
    for p in pages:
        books.setdefault(p.group, []).append(p)
    for book in books.values():
        book = sorted(book, key=lambda p: p.name)
        yield from zip(book[::2], book[1::2], strict=False)


def own_page(p: Page) -> tuple[Image.Image, list[Box]]:
    """The page cut to its own paper (``page_extent`` on the scan as published: a library
    scan carries its bed, its facing page's edge and its chart, which an opening has only
    round both pages), with its picture boxes in the cut's fractions."""
    img = Image.open(DATA / p.name).convert("RGB")
    x0, y0, x1, y1 = page_extent.find(np.asarray(img)).page
    w, h = img.size
    cut = img.crop((round(x0 * w), round(y0 * h), round(x1 * w), round(y1 * h)))
    fw, fh = x1 - x0, y1 - y0
    return cut, [(max(0.0, (t[0] - x0) / fw), max(0.0, (t[1] - y0) / fh),
                  min(1.0, (t[2] - x0) / fw), min(1.0, (t[3] - y0) / fh)) for t in p.truth]


def opening(left: Page, right: Page, scale: float) -> tuple[bytes, list[Box]]:
    """The two pages side by side at one height on a dark bed, meeting at the fold, as
    JPEG bytes, and their picture boxes in the opening's fractions."""
    (a, ta), (b, tb) = own_page(left), own_page(right)
    h = round(max(a.height, b.height) * scale)
    a, b = (im.resize((round(im.width * h / im.height), h), Image.Resampling.LANCZOS)
            for im in (a, b))
    m = round(BED * h)
    w, hh = a.width + b.width + 2 * m, h + 2 * m
    out = Image.new("RGB", (w, hh), (BED_LEVEL,) * 3)
    out.paste(a, (m, m))
    out.paste(b, (m + a.width, m))

    def moved(t: Box, x: int, pw: int) -> Box:
        return ((x + t[0] * pw) / w, (m + t[1] * h) / hh, (x + t[2] * pw) / w,
                (m + t[3] * h) / hh)
    truth = [moved(t, m, a.width) for t in ta] + [moved(t, m + a.width, b.width) for t in tb]
    buf = io.BytesIO()
    out.save(buf, "JPEG", quality=90)
    return buf.getvalue(), truth


def kept(data: bytes) -> list[Box]:
    return kept_boxes(jpeg_preview(data), closer=lambda side: jpeg_preview(data, side))


def report(label: str, pages: list[Page], scale: float) -> None:
    results, wrong = [], []
    for left, right in pairs(pages):
        data, truth = opening(left, right, scale)
        boxes = kept(data)
        results.append((truth, boxes))
        hits = len(match(truth, boxes))
        if hits < len(truth) or hits < len(boxes):
            wrong.append(f"{left.name.split('/')[-1]} + {right.name.split('/')[-1]}: "
                         f"{hits} of {len(truth)} found, {len(boxes) - hits} false")
    print(f"{label}, {len(results)} openings at {scale:g}x:\n  {fmt(score(results))}")
    for line in wrong:
        print(f"    {line}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scales", nargs="*", type=float, default=[1.0, 3.0])
    args = ap.parse_args()
    for scale in args.scales:
        report("early printed books", early_pages(), scale)
        report("Moreno chapbooks", moreno_pages(), scale)


if __name__ == "__main__":
    main()
