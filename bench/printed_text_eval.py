"""How well ``printed_text`` finds each woodcut's title, on the 103 shared chapbook pages.

    python -m bench.printed_text_eval               # text layer: pipeline boxes, CV
    python -m bench.printed_text_eval --ocr spa     # also Tesseract on image-only scans
    python -m bench.printed_text_eval --ocr spa --page-ocr   # and a whole-page OCR peer

The pages are built into PDFs as libraries publish them: the scan, with an invisible
text layer (render mode 3) holding every line of ``figures/moreno/lines.csv`` at its
box, in a form XObject drawn under the image as OCRmyPDF grafts it. Then the real
pipeline runs (``python -m archive`` on the PDF: figure finder, crops, printed text).

Ground truth, from the annotations alone (not from the rule being scored):
- a woodcut's **title line** is the nearest printed line above or below it that
  overlaps it horizontally, within 10% of the page height, and is not just a number
  ("Núm. 23"); a woodcut with no such line has no title line;
- its **near lines** are every line overlapping it horizontally within 15% of the
  page height above or below (numbers included).

Scores (words compared case-folded, punctuation stripped, as multisets):
- **title**: woodcuts with a title line whose ``printed_text`` holds >= 80% of its words
  (target >= 90%);
- **from near lines**: the share of ``printed_text`` words that are words of the near
  lines (target >= 90%);
- per chapbook, and by leave-one-chapbook-out CV over the rule's two distances
  (MAX_GAP, OVERLAP): each chapbook is scored with the grid point best on the others.

Woodcuts are matched to the finder's crops (kept or doubtful) at IoU >= 0.5; "given
boxes" applies the rule to the annotated boxes instead, to separate the finder's misses
from the rule's. ``--ocr`` rebuilds the pages as image-only scans and reads them with
``--ocr LANG``: the same scores, word accuracy on the title lines and seconds a page.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import os
import re
import statistics
import sys
import tempfile
import time
import unicodedata
import zipfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from archive import build_dataset, printed_text  # noqa: E402
from archive.boxes import iou  # noqa: E402
from archive.reader import open_pdf  # noqa: E402
from tests.pdf_factory import (  # noqa: E402
    chapbook_boxes,
    chapbook_lines,
    scans_pdf,
    text_layer_pdf,
)

DATA = Path(os.environ.get("BORDE_SHARED_DATA", ROOT.parent / "shared" / "data"))
TITLE_GAP, NEAR_GAP = 0.10, 0.15  # of the page height
GRID = {"MAX_GAP": (2.0, 3.0, 4.0, 6.0), "OVERLAP": (0.1, 0.25, 0.5)}
Box = tuple[float, float, float, float]


def norm_words(text: str) -> list[str]:
    text = unicodedata.normalize("NFC", text).casefold()
    return [w for w in (re.sub(r"[^\w]", "", t) for t in text.split()) if w]


@dataclass
class Woodcut:
    path: Path
    box: Box  # fractions
    title: list[str]  # words of its title line ([] if none)
    near: Counter  # words of its near lines

    @property
    def book(self) -> str:
        return self.path.stem.split("_")[-2]


def woodcuts(data: Path) -> list[Woodcut]:
    boxes, lines = chapbook_boxes(data), chapbook_lines(data)
    out = []
    for path, page_boxes in sorted(boxes.items()):
        if not page_boxes:
            continue
        from PIL import Image

        w, h = Image.open(path).size
        for x0, y0, x1, y1 in page_boxes:
            title, near = None, Counter()
            for (lx0, ly0, lx1, ly1), text in lines.get(path, []):
                if min(x1, lx1) <= max(x0, lx0):
                    continue
                middle = (ly0 + ly1) / 2
                if y0 < middle < y1:
                    continue
                gap = ly0 - y1 if middle >= y1 else y0 - ly1
                gap = max(0, gap)
                if gap <= NEAR_GAP * h:
                    near.update(norm_words(text))
                if gap <= TITLE_GAP * h and not printed_text.is_number_label(text) \
                        and (title is None or gap < title[0]):
                    title = (gap, text)
            out.append(Woodcut(path, (x0 / w, y0 / h, x1 / w, y1 / h),
                               norm_words(title[1]) if title else [], near))
    return out


def holds(printed: str, line: list[str], share: float = 0.8) -> bool:
    got = Counter(norm_words(printed))
    want = Counter(line)
    return sum(min(got[w], n) for w, n in want.items()) >= share * sum(want.values())


def from_near(printed: str, near: Counter) -> tuple[int, int]:
    got = Counter(norm_words(printed))
    return sum(min(n, near[w]) for w, n in got.items()), sum(got.values())


def score(cuts: list[Woodcut], printed: list[str | None]) -> dict:
    """Title share (over woodcuts with a title line), words from near lines."""
    titled = [(c, p) for c, p in zip(cuts, printed, strict=True) if c.title]
    hit = sum(p is not None and holds(p, c.title) for c, p in titled)
    good = total = 0
    for c, p in zip(cuts, printed, strict=True):
        if p:
            g, t = from_near(p, c.near)
            good, total = good + g, total + t
    return {"title": hit, "titled": len(titled), "near": good, "words": total,
            "found": sum(p is not None for p in printed), "n": len(cuts)}


def fmt(s: dict) -> str:
    t = s["title"] / s["titled"] if s["titled"] else float("nan")
    n = s["near"] / s["words"] if s["words"] else float("nan")
    return (f"title {t:6.1%} ({s['title']}/{s['titled']}), from near lines {n:6.1%} "
            f"({s['near']}/{s['words']} words), woodcuts with a crop {s['found']}/{s['n']}")


def add(a: dict, b: dict) -> dict:
    return {k: a.get(k, 0) + b[k] for k in b}


def page_words(pdf: Path) -> dict[int, list[printed_text.Word]]:
    doc = open_pdf(pdf)
    out = {i + 1: printed_text.text_layer_words(doc[i]) for i in range(doc.page_count)}
    doc.close()
    return out


def crops_of(zip_path: Path) -> dict[int, list[tuple[Box, str]]]:
    """Page -> the finder's stored crops (kept or doubtful): box and printed_text."""
    with zipfile.ZipFile(zip_path) as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
    out: dict[int, list[tuple[Box, str]]] = defaultdict(list)
    for r in rows:
        if r["file_name"] or r["kept"] == "1":
            box = tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))
            out[int(r["page"])].append((box, r["printed_text"]))
    return out


def match(cuts: list[Woodcut], pages: list[Path], crops: dict) -> list[Box | None]:
    """Each woodcut's crop at IoU >= 0.5 (one to one, best first), or None."""
    page_of = {p: i + 1 for i, p in enumerate(pages)}
    out: list[Box | None] = []
    used: set[tuple[int, int]] = set()
    for c in cuts:
        n = page_of[c.path]
        best = max(((iou(c.box, b), k) for k, (b, _t) in enumerate(crops.get(n, []))
                    if (n, k) not in used), default=(0.0, -1))
        if best[0] >= 0.5:
            used.add((n, best[1]))
            out.append(crops[n][best[1]][0])
        else:
            out.append(None)
    return out


def rule_texts(cuts: list[Woodcut], boxes: list[Box | None], pages: list[Path],
               words: dict, params: dict | None = None) -> list[str | None]:
    """printed_text for each woodcut's box with the rule's constants set to ``params``."""
    saved = {k: getattr(printed_text, k) for k in (params or {})}
    for k, v in (params or {}).items():
        setattr(printed_text, k, v)
    try:
        page_of = {p: i + 1 for i, p in enumerate(pages)}
        out = []
        for c, box in zip(cuts, boxes, strict=True):
            if box is None:
                out.append(None)
                continue
            from PIL import Image

            w, h = Image.open(c.path).size
            ws = printed_text.scaled(words[page_of[c.path]], w, h)
            px = (box[0] * w, box[1] * h, box[2] * w, box[3] * h)
            out.append(printed_text.printed_texts([px], ws)[0])
        return out
    finally:
        for k, v in saved.items():
            setattr(printed_text, k, v)


def per_book(cuts: list[Woodcut], printed: list[str | None]) -> dict[str, dict]:
    books: dict[str, dict] = {}
    for c, p in zip(cuts, printed, strict=True):
        books[c.book] = add(books.get(c.book, {}), score([c], [p]))
    return books


def cross_validate(cuts, boxes, pages, words) -> dict:
    """Leave one chapbook out: each is scored with the grid point best on the others."""
    grid = [dict(zip(GRID, v, strict=True)) for v in itertools.product(*GRID.values())]
    return leave_one_book_out({json_key(g): per_book(cuts, rule_texts(cuts, boxes, pages,
                                                                      words, g))
                               for g in grid})


def leave_one_book_out(books_by: dict[str, dict[str, dict]]) -> dict:
    """Each chapbook scored with the grid point (in order) best on all the other chapbooks."""
    def merit(key: str, book: str) -> float:
        s: dict = {}
        for b, v in books_by[key].items():
            if b != book:
                s = add(s, v)
        return (s["title"] / max(1, s["titled"]) + s["near"] / max(1, s["words"])) / 2

    total: dict = {}
    chosen = Counter()
    for book in sorted(next(iter(books_by.values()))):
        best = max(books_by, key=lambda key: merit(key, book))  # noqa: B023 - used at once
        chosen[best] += 1
        total = add(total, books_by[best][book])
    return {"score": total, "chosen": chosen}


def json_key(g: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in g.items())


def run_archive(pdf: Path, out: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    build_dataset([pdf], out, overwrite=True, **dict(zip(extra[::2], extra[1::2], strict=True)))
    return time.perf_counter() - t0


def text_layer_eval(tmp: Path, pages: list[Path], cuts: list[Woodcut]) -> None:
    pdf = text_layer_pdf(tmp / "chapbooks-ocr-layer.pdf", pages, chapbook_lines(DATA))
    seconds = run_archive(pdf, tmp / "layer.zip")
    crops = crops_of(tmp / "layer.zip")
    boxes = match(cuts, pages, crops)
    texts = {b: t for n in crops for b, t in crops[n]}
    printed = [texts[b] if b is not None else None for b in boxes]
    words = page_words(pdf)
    print(f"text layer ({len(pages)} pages, {seconds:.1f} s for the whole build):")
    print(f"  pipeline, as shipped:       {fmt(score(cuts, printed))}")
    given = rule_texts(cuts, [c.box for c in cuts], pages, words)
    print(f"  given boxes, as shipped:    {fmt(score(cuts, given))}")
    cv = cross_validate(cuts, boxes, pages, words)
    print(f"  pipeline, chapbook CV:      {fmt(cv['score'])}")
    print(f"    grid points chosen: {dict(cv['chosen'])}")
    print("  per chapbook (pipeline, as shipped):")
    for book, s in sorted(per_book(cuts, printed).items()):
        print(f"    {book}: {fmt(s)}")
    misses = [(c, p) for c, p in zip(cuts, printed, strict=True)
              if c.title and (p is None or not holds(p, c.title))]
    for c, p in misses:
        print(f"    miss {c.path.name}: title {' '.join(c.title)!r}, printed {p!r}")


OCR_GRID = {"PSM": ("AUTO", "SINGLE_BLOCK"), "MIN_CONFIDENCE": (0.0, 20.0, 40.0)}


def ocr_texts(pdf: Path, out: Path, cuts: list[Woodcut], pages: list[Path], lang: str,
              params: dict | None = None) -> tuple[list[str | None], float]:
    """printed_text of each woodcut from a ``--ocr`` build with ``archive.ocr`` set to params."""
    from archive import ocr

    saved = {k: getattr(ocr, k) for k in (params or {})}
    for k, v in (params or {}).items():
        setattr(ocr, k, v)
    ocr._engines.clear()
    try:
        seconds = run_archive(pdf, out, "ocr", lang)
    finally:
        for k, v in saved.items():
            setattr(ocr, k, v)
        ocr._engines.clear()
    crops = crops_of(out)
    boxes = match(cuts, pages, crops)
    texts = {b: t for n in crops for b, t in crops[n]}
    return [texts[b] if b is not None else None for b in boxes], seconds


def ocr_cross_validate(pdf: Path, tmp: Path, cuts: list[Woodcut], pages: list[Path],
                       lang: str) -> dict:
    """Leave one chapbook out over Tesseract's segmentation mode and confidence floor."""
    grid = [dict(zip(OCR_GRID, v, strict=True)) for v in itertools.product(*OCR_GRID.values())]
    books_by = {}
    for g in grid:
        printed, _ = ocr_texts(pdf, tmp / "grid.zip", cuts, pages, lang, g)
        books_by[json_key(g)] = per_book(cuts, printed)
    return leave_one_book_out(books_by)


def ocr_eval(tmp: Path, pages: list[Path], cuts: list[Woodcut], lang: str,
             page_ocr: bool) -> None:
    pdf = scans_pdf(tmp / "chapbooks-scans.pdf", pages)
    plain = run_archive(pdf, tmp / "plain.zip")
    printed, seconds = ocr_texts(pdf, tmp / "ocr.zip", cuts, pages, lang)
    crops = crops_of(tmp / "ocr.zip")
    with zipfile.ZipFile(tmp / "ocr.zip") as zf:
        manifest = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
    kept_pages = sum(r["kept"] == "1" for r in manifest)
    boxes = match(cuts, pages, crops)
    print(f"\n--ocr {lang} on image-only scans ({len(pages)} pages; {kept_pages} with a kept "
          "crop, the only ones read):")
    print(f"  pipeline:                   {fmt(score(cuts, printed))}")
    print(f"  word accuracy on title lines: {word_accuracy(cuts, printed):.1%} of their words "
          "read right")
    cpu, wall = ocr_seconds(pdf, tmp / "ocr.zip", lang)
    print(f"  time: {cpu:.3f} s of CPU ({wall:.3f} s wall) of OCR a page read, decode "
          f"included; build {seconds:.1f} s against {plain:.1f} s without --ocr")
    cv = ocr_cross_validate(pdf, tmp, cuts, pages, lang)
    print(f"  pipeline, chapbook CV:      {fmt(cv['score'])}")
    print(f"    grid points chosen: {dict(cv['chosen'])}")
    print("  per chapbook (as shipped):")
    for book, s in sorted(per_book(cuts, printed).items()):
        print(f"    {book}: {fmt(s)}")
    if page_ocr:
        whole_page_peer(pages, cuts, boxes, lang)


def ocr_seconds(pdf: Path, built: Path, lang: str) -> tuple[float, float]:
    """CPU and wall seconds a page of what --ocr adds (full decode and the bands' OCR)."""
    from archive import ocr
    from archive.reader import read_page

    with zipfile.ZipFile(built) as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
    kept: dict[int, list[Box]] = defaultdict(list)
    for r in rows:
        if r["kept"] == "1":
            kept[int(r["page"])].append(tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1")))
    doc = open_pdf(pdf)
    ocr.engine(lang)  # loaded once a job: not a page's cost
    cpu, wall = time.process_time(), time.perf_counter()
    for n, boxes in kept.items():
        ocr.band_words(read_page(doc, n - 1).full(), boxes, lang)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    doc.close()
    return cpu / max(1, len(kept)), wall / max(1, len(kept))


def word_accuracy(cuts: list[Woodcut], printed: list[str | None]) -> float:
    good = total = 0
    for c, p in zip(cuts, printed, strict=True):
        if not c.title:
            continue
        got, want = Counter(norm_words(p or "")), Counter(c.title)
        good += sum(min(got[w], n) for w, n in want.items())
        total += sum(want.values())
    return good / total if total else float("nan")


def whole_page_peer(pages: list[Path], cuts: list[Woodcut], boxes: list[Box | None],
                    lang: str) -> None:
    """The issue's baseline: Tesseract over the whole page, then the same rule."""
    import tesserocr
    from PIL import Image

    from archive import ocr

    api = ocr.engine(lang)
    words, seconds = {}, []
    for n, path in enumerate(pages, 1):
        if not any(c.path == path for c in cuts):
            continue
        img = Image.open(path).convert("RGB")
        t0 = time.perf_counter()
        api.SetImage(img)
        api.Recognize()
        found, level = [], tesserocr.RIL.WORD
        for r in tesserocr.iterate_level(api.GetIterator(), level):
            box = r.BoundingBox(level)
            text = (r.GetUTF8Text(level) or "").strip()
            if box and text:
                x0, y0, x1, y1 = box
                found.append(printed_text.Word(x0 / img.width, y0 / img.height,
                                               x1 / img.width, y1 / img.height, text))
        seconds.append(time.perf_counter() - t0)
        words[n] = found
    printed = rule_texts(cuts, boxes, pages, defaultdict(list, words))
    print(f"  whole-page OCR peer:        {fmt(score(cuts, printed))}; word accuracy "
          f"{word_accuracy(cuts, printed):.1%}; {statistics.mean(seconds):.2f} s a page")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ocr", default=None, metavar="LANG")
    p.add_argument("--page-ocr", action="store_true", help="with --ocr: whole-page OCR peer")
    args = p.parse_args()
    cuts = woodcuts(DATA)
    pages = sorted(chapbook_boxes(DATA))
    print(f"{len(cuts)} woodcuts on {len({c.path for c in cuts})} of {len(pages)} pages, "
          f"{sum(bool(c.title) for c in cuts)} with a title line, "
          f"{len({c.book for c in cuts})} chapbooks; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    with tempfile.TemporaryDirectory(prefix="printed-eval-") as tmp:
        text_layer_eval(Path(tmp), pages, cuts)
        if args.ocr:
            ocr_eval(Path(tmp), pages, cuts, args.ocr, args.page_ocr)


if __name__ == "__main__":
    main()
