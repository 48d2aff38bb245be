"""A golden snapshot of the figure finder's regions on every shared page (issue 61).

    python -m bench.figure_golden            # compare with the snapshot: what changed
    python -m bench.figure_golden --write    # the finder changed on purpose: regenerate it

Why: a rule that mends one page moves pages nobody looks at. The snapshot holds, for
every page image of the shared figure and text-page sets (not ``pages/ufal``: test use
only), what ``archive.figures.find`` makes of it: the page's extent, its text height and
every candidate region (box, score, kind, kept, reason, turned), rounded as
``records.RegionRecord`` rounds them. ``tests/test_figure_golden.py`` fails on any
difference and prints this module's summary, so a change to the finder shows, page by
page, what it moved.

Each page is read as the reader previews a single-scan PDF page: a JPEG scan decoded at
its smallest DCT scale (``figure_eval.jpeg_preview``), with the ``closer`` the pipeline
gives it (``reader.closer``: the same JPEG decoded again at a larger side); any other
scan (PNG) as MuPDF renders it (``figure_eval.render_preview``), with no closer, as
``reader.closer`` gives none for a rendered page. One core (``cv2.setNumThreads(1)``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import cv2

from archive import figures as F
from archive.boxes import iou
from bench.figure_eval import DATA, ROOT, load_preview, match

SOURCES = ("figures/early/images", "figures/moreno/images", "figures/other_sources/images",
           "pages/dta_text", "pages/ocrd")
SCANS = frozenset({".jpg", ".jpeg", ".png", ".tif", ".tiff"})
JPEG = frozenset({".jpg", ".jpeg"})
GOLDEN = ROOT / "tests" / "golden" / "figure_regions.json"
DIGITS = 4  # as RegionRecord rounds a box, and regions.csv writes a score
# Equality, after rounding: two runs, and python 3.11 against 3.10, gave the same digits
SCORE_TOL = 0.0
SAME_BOX = 1.0  # IoU at which two boxes are the same
MOVED = 0.99  # a box whose IoU with its old self is under this "moved"; above, "nudged"
SHOWN = 20  # changed pages a summary names by default
PER_PAGE = 8  # changes it names on one page, the most telling first
Snapshot = dict[str, dict]


def page_files(data: Path = DATA) -> list[str]:
    """Every page image of ``SOURCES``, by its path relative to ``data``, sorted."""
    return sorted(p.relative_to(data).as_posix() for src in SOURCES
                  for p in (data / src).rglob("*")
                  if p.is_file() and p.suffix.lower() in SCANS)


def source_of(rel: str) -> str:
    """The set a page belongs to: the ``SOURCES`` folder its path starts with."""
    return next((s for s in SOURCES if rel.startswith(s + "/")), rel.rsplit("/", 1)[0])


def closer_for(path: Path) -> F.Closer | None:
    """What ``reader.closer`` gives a single-JPEG page: its scan decoded again at a larger
    side. None for any other scan, which MuPDF renders."""
    if path.suffix.lower() not in JPEG:
        return None
    return lambda side: load_preview(path, side)


def _r(v: float) -> float:
    return round(float(v), DIGITS)


def read_page(data: Path, rel: str) -> dict:
    """What the finder makes of one page, rounded for the snapshot."""
    path = data / rel
    found = F.find(load_preview(path), closer=closer_for(path))
    return {"page": [_r(v) for v in found.page], "text_height": _r(found.text_height),
            "regions": [{"box": [_r(v) for v in r.box], "score": _r(r.score), "kind": r.kind,
                         "kept": bool(r.kept), "reason": r.reason, "turned": int(r.turned)}
                        for r in found.regions]}


def take(data: Path, rels: Iterable[str], progress: bool = True) -> Snapshot:
    """The snapshot of the given pages, one core, with a progress bar on stderr."""
    rels = list(rels)
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        if progress:
            from tqdm import tqdm
            rels = tqdm(rels, desc="pages", unit="page", file=sys.stderr)
        return {rel: read_page(data, rel) for rel in rels}
    finally:
        cv2.setNumThreads(threads)


def write(pages: Snapshot, path: Path = GOLDEN) -> None:
    """The snapshot as JSON, one line per page, sorted, so a diff shows the pages moved."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [f" {json.dumps(rel)}: {json.dumps(pages[rel], separators=(',', ':'))}"
             for rel in sorted(pages)]
    path.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")


def load(path: Path = GOLDEN) -> Snapshot:
    return json.loads(path.read_text(encoding="utf-8"))


def _name(r: dict) -> str:
    """A region in words: its kind, whether kept (or why not), and its box."""
    state = "kept" if r["kept"] else f"dropped ({r['reason']})"
    return f"{r['kind']} {state} at [{', '.join(f'{v:.3f}' for v in r['box'])}]"


# How telling a change is, so the pages that gained or lost a crop come first: 0 a crop
# gained or lost, 1 a verdict (kind, reason, turned) or a candidate come or gone, 2 a box
# or the page's measures, 3 a score alone
Change = tuple[int, str]


def _region_changes(old: dict, new: dict) -> list[Change]:
    """What changed between a region and its match (their boxes overlap by IoU >= 0.5)."""
    out = []
    if old["kept"] != new["kept"]:
        out.append((0, "now kept" if new["kept"] else f"now dropped ({new['reason']})"))
    elif old["reason"] != new["reason"]:
        out.append((1, f"reason {old['reason'] or '-'} -> {new['reason'] or '-'}"))
    if old["kind"] != new["kind"]:
        out.append((1, f"kind {old['kind']} -> {new['kind']}"))
    if old["turned"] != new["turned"]:
        out.append((1, f"turned {old['turned']} -> {new['turned']}"))
    v = iou(tuple(old["box"]), tuple(new["box"]))
    if v < SAME_BOX and old["box"] != new["box"]:
        out.append((2, f"box {'moved' if v < MOVED else 'nudged'} (IoU {v:.3f})"))
    if abs(old["score"] - new["score"]) > SCORE_TOL:
        out.append((3, f"score {old['score']:.4f} -> {new['score']:.4f}"))
    return out


def _unequal(a: list[dict], b: list[dict]) -> tuple[list[dict], list[dict]]:
    """The regions of each list that the other does not hold as they are."""
    rest = list(b)
    left = []
    for r in a:
        if r in rest:
            rest.remove(r)
        else:
            left.append(r)
    return left, rest


def _page_changes(old: dict, new: dict) -> list[Change]:
    out = []
    v = iou(tuple(old["page"]), tuple(new["page"]))
    if v < SAME_BOX and old["page"] != new["page"]:
        out.append((1 if v < MOVED else 2,
                    f"page extent {'moved' if v < MOVED else 'nudged'} (IoU {v:.3f})"))
    if old["text_height"] != new["text_height"]:
        out.append((2, f"text height {old['text_height']} -> {new['text_height']}"))
    a, b = _unequal(old["regions"], new["regions"])
    pairs = match([tuple(r["box"]) for r in a], [tuple(r["box"]) for r in b])
    for i, j, _v in sorted(pairs):
        changes = _region_changes(a[i], b[j])
        if changes:
            out.append((min(c[0] for c in changes),
                        f"{_name(a[i])}: {'; '.join(c[1] for c in changes)}"))
    out += [(0 if a[i]["kept"] else 1, f"gone: {_name(a[i])}")
            for i in sorted(set(range(len(a))) - {i for i, _, _ in pairs})]
    out += [(0 if b[j]["kept"] else 1, f"new: {_name(b[j])}")
            for j in sorted(set(range(len(b))) - {j for _, j, _ in pairs})]
    return sorted(out, key=lambda c: c[0])


def page_changes(old: dict, new: dict) -> list[str]:
    """Every difference between a page's snapshot and what the finder makes of it now,
    in words, a crop gained or lost first; empty when they agree."""
    return [text for _rank, text in _page_changes(old, new)]


def compare(golden: Snapshot, current: Snapshot) -> dict[str, list[str]]:
    """The pages of ``current`` whose regions differ from ``golden``, with what changed:
    the pages that gained or lost a crop first, then verdicts, boxes, scores alone."""
    ranked = []
    for rel in sorted(current):
        changes = _page_changes(golden[rel], current[rel]) if rel in golden else [
            (0, "not in the snapshot")]
        if changes:
            ranked.append((changes[0][0], rel, [text for _rank, text in changes]))
    return {rel: texts for _rank, rel, texts in sorted(ranked)}


def coverage(golden: Snapshot, files: Iterable[str]) -> list[str]:
    """What keeps the snapshot from covering exactly the page files there are: a page file
    it lacks, a page it holds whose file is gone. Empty when it covers them all."""
    files = set(files)
    missing, stale = sorted(files - set(golden)), sorted(set(golden) - files)
    out = []
    for what, rels in (("page files not in the snapshot", missing),
                       ("snapshot pages with no file", stale)):
        if rels:
            more = f" and {len(rels) - 3} more" if len(rels) > 3 else ""
            out.append(f"{len(rels)} {what}: {', '.join(rels[:3])}{more}")
    if out:
        out.append(f"regenerate it: python -m bench.figure_golden --write ({GOLDEN.name})")
    return out


def summary(changes: dict[str, list[str]], pages: Iterable[str], shown: int = SHOWN) -> str:
    """Pages changed per source, then what changed on the first ``shown`` of them."""
    pages = list(pages)
    total, changed = Counter(map(source_of, pages)), Counter(map(source_of, changes))
    head = (f"{len(changes)} of {len(pages)} pages changed: "
            + ", ".join(f"{s} {changed[s]} of {n}" for s, n in sorted(total.items())))
    lines = [head]
    for rel in list(changes)[:shown]:
        lines.append(rel)
        lines += [f"  - {c}" for c in changes[rel][:PER_PAGE]]
        if len(changes[rel]) > PER_PAGE:
            lines.append(f"  ... and {len(changes[rel]) - PER_PAGE} more changes")
    if len(changes) > shown:
        lines.append(f"... and {len(changes) - shown} more pages")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description="The figure finder's golden snapshot.")
    ap.add_argument("--write", action="store_true", help=f"regenerate {GOLDEN.name}")
    ap.add_argument("--all", action="store_true", help="name every changed page, not 20")
    args = ap.parse_args()
    files = page_files()
    if args.write:
        write(take(DATA, files))
        print(f"wrote {len(files)} pages to {GOLDEN.relative_to(ROOT)}")
        return 0
    golden = load()
    changes = compare(golden, take(DATA, [f for f in files if f in golden]))
    print(summary(changes, [f for f in files if f in golden],
                  len(changes) if args.all else SHOWN))
    gaps = coverage(golden, files)
    if gaps:
        print("\n".join(gaps))
    return 1 if changes or gaps else 0


if __name__ == "__main__":
    sys.exit(main())
