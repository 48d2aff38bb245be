"""Where the finder's misses come from, and how its tuning holds up on a source it never saw.

Printed by ``python -m bench.figure_eval`` (``--loso-only`` for these tables alone; issue
#61 items 3 and 5). Four sources, each a collection and never a book: the chapbooks of
figures/moreno, the early printed books of figures/early, the five collections of
figures/other_sources, and the composites of bench/composites.py (Moreno woodcuts pasted
into DTA and OCR-D text pages, in colour, grey and binarized; reported by mode, left out
as one source since the three modes share their woodcuts and pages).

- **Proposal recall**: with the shipped PARAMS, a picture is *proposed* when any
  candidate region the finder lists, kept or not, has IoU >= 0.5 with it, and *found*
  when a kept crop matches it one-to-one (the final recall). A picture missed though
  proposed is a *verdict miss*, counted under the reason and kind of its best candidate
  that was not kept; one never proposed is a *proposal miss*.
- **Book-grouped CV** (``figure_eval.grouped_cv``): each book (each chapbook; each text
  book of the composites) is scored at the grid point chosen on the other books of its
  own source.
- **Leave-one-source-out**: each source is scored at the grid point chosen on the other
  sources, each of them weighing the same (the mean of their objectives), so one big
  source does not set the point for all. The composites are made of the Moreno
  woodcuts, so neither of the two is ever fitted while the other is scored (``TIED``).

The grid (``figure_eval.GRID`` x ``PADS``) is the only fitted part of the finder: every
other constant was set by hand while looking at these same pages, so no split can
cross-validate it, and both columns read high for the design as a whole.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from archive import figures as F
from archive.boxes import iou
from bench.figure_eval import (
    COMBOS,
    DATA,
    GRID,
    Box,
    Grid,
    Option,
    Page,
    at_option,
    best_option,
    early_pages,
    grid_options,
    grid_raw,
    grouped_cv_raw,
    load_preview,
    match,
    moreno_pages,
    other_pages,
    page_tasks,
    score,
)

# sources made of the same material: never fitted while the other is scored
TIED = {"composites": frozenset({"figures/moreno"}),
        "figures/moreno": frozenset({"composites"})}
NOTE = ("Only the grid (figure_eval.GRID: seed_h, big, small_h; and the pad) is fitted, so "
        "only it is cross-validated here: the finder's other hand-set constants were set "
        "while looking at these pages and cannot be cross-validated by any split.")
Results = list[tuple[list[Box], list[Box]]]


@dataclass
class Source:
    """One source's pages, what the finder lists on them and its grid of kept boxes."""

    name: str
    pages: list[Page]
    found: list[F.Finding]  # shipped PARAMS, every candidate
    raw: Grid  # [combo][page]: kept boxes, unpadded
    ms: list[float]  # detector CPU time per page, shipped PARAMS
    parts: dict[str, list[int]] = field(default_factory=dict)  # rows reported within it
    split_parts: bool = False  # report the parts in the CV and LOSO table too
    extra: list = field(default_factory=list)  # the composites themselves, in page order

    @property
    def truths(self) -> list[list[Box]]:
        return [p.truth for p in self.pages]


def _shipped(pages: list[Page], scans: bool) -> tuple[list[F.Finding], list[float]]:
    """The finder at the shipped PARAMS on every preview, with its CPU time per page."""
    found, ms = [], []
    for p in pages:
        if p.preview is None:
            p.preview = load_preview(DATA / p.name)
        t = time.process_time()
        found.append(F.find(p.preview, closer=p.closer() if scans else None))
        ms.append((time.process_time() - t) * 1000)
    return found, ms


def scan_source(name: str, pages: list[Page], jobs: int = 1) -> Source:
    """A source of real scans, read as the pipeline reads them (with the closer); where
    its books name several collections (``collection:book``), their misses apart."""
    found, ms = _shipped(pages, True)
    parts: dict[str, list[int]] = {}
    for i, p in enumerate(pages):
        if ":" in p.group:
            parts.setdefault(p.group.split(":")[0], []).append(i)
    return Source(name, pages, found, grid_raw(page_tasks(pages), jobs), ms,
                  parts if len(parts) > 1 else {})


def text_book(stem: str) -> str:
    """The book of a text page: its file stem without the page number."""
    return re.sub(r"[-_]\d{3,}$", "", stem)


def composite_source(per_cell: int, jobs: int = 1) -> Source:
    """The composites figure_eval builds, grouped by the book of their text page."""
    from bench import composites

    built = list(composites.build(per_cell=per_cell))
    pages = [Page(c.name, text_book(c.name.split("-", 3)[3]), c.boxes, c.preview(),
                  label=c.mode) for c in built]
    found, ms = _shipped(pages, False)
    parts = {m: [i for i, c in enumerate(built) if c.mode == m] for m in composites.MODES}
    return Source("composites", pages, found, grid_raw([(p.preview, None) for p in pages], jobs),
                  ms, parts, True, built)


def prepare(per_cell: int, jobs: int = 1) -> dict[str, Source]:
    """Every source, in the order they are reported."""
    out = {name: scan_source(name, pages(), jobs)
           for name, pages in (("figures/moreno", moreno_pages), ("figures/early", early_pages),
                               ("figures/other_sources", other_pages))}
    out["composites"] = composite_source(per_cell, jobs)
    return out


def miss_split(truth: list[Box], regions: list[F.Region]) -> tuple[int, int, list[str]]:
    """(found, proposed, why) on one page: pictures matched one-to-one by a kept crop,
    pictures that any candidate matches at IoU >= 0.5, and for each picture proposed but
    not found the reason (kind) of its best candidate that was not kept."""
    kept = [r.box for r in regions if r.kept]
    found = {i for i, _j, _v in match(truth, kept)}
    proposed, why = 0, []
    for i, t in enumerate(truth):
        near = sorted(((iou(t, r.box), k) for k, r in enumerate(regions)), reverse=True)
        near = [regions[k] for v, k in near if v >= 0.5]
        if not near:
            continue
        proposed += 1
        if i in found:
            continue
        dropped = [r for r in near if not r.kept]
        why.append(f"{dropped[0].reason or '-'} ({dropped[0].kind})" if dropped
                   else "kept, matched to another picture")
    return len(found), proposed, why


def loso_training(names: Iterable[str], tied: dict[str, frozenset[str]] = TIED
                  ) -> dict[str, list[str]]:
    """For each source, the sources its grid point is chosen on: every other one that
    shares no material with it."""
    names = list(names)
    out = {n: [m for m in names if m != n and m not in tied.get(n, frozenset())]
           for n in names}
    for n, train in out.items():
        if not train:
            raise ValueError(f"no source left to fit {n} on")
    return out


def loso_raw(data: dict[str, tuple[Grid, list[list[Box]]]],
             tied: dict[str, frozenset[str]] = TIED) -> dict[str, tuple[Option, Results]]:
    """Leave one source out over computed grids (name -> (grid, truths)): each source's
    (truth, boxes) per page at the option chosen on its training sources alone."""
    options = grid_options()
    out = {}
    for name, train in loso_training(data, tied).items():
        opt = best_option(options, [(data[m][0], data[m][1], list(range(len(data[m][1]))))
                                    for m in train])
        raw, truths = data[name]
        out[name] = (opt, at_option(raw, truths, opt, range(len(truths))))
    return out


def option_words(opt: Option) -> str:
    """A grid point as (seed_h, big, small_h) + pad, '(shipped)' where it is."""
    ci, pd = opt
    vals = tuple(COMBOS[ci].values())
    shipped = tuple(F.PARAMS[k] for k in COMBOS[ci]) == vals and pd == F.PARAMS["pad"]
    return f"({', '.join(f'{v:g}' for v in vals)}) pad {pd:g}" + (" (shipped)" if shipped else "")


def _pct(a: int, n: int) -> str:
    return f"{a} of {n} ({a / n:.0%})" if n else "—"


def report_misses(sources: dict[str, Source]) -> None:
    """Proposal recall beside final recall, per source; the verdict misses by reason."""
    print("\nWhere the misses come from (shipped PARAMS): a picture is proposed when any "
          "candidate the finder lists, kept or not, has IoU >= 0.5 with it; found when a "
          "kept crop matches it.\n")
    print("| source | pictures | found (kept crop) | proposed (any candidate) "
          "| proposal misses | verdict misses |")
    print("|---|---|---|---|---|---|")
    whys: dict[str, Counter] = {}
    for name, src in sources.items():
        rows = {name: range(len(src.pages))}
        rows.update({f"{name}: {k}": v for k, v in src.parts.items()})
        for label, idx in rows.items():
            n = found = proposed = 0
            why: Counter = Counter()
            for i in idx:
                f, p, w = miss_split(src.pages[i].truth, src.found[i].regions)
                n, found, proposed = n + len(src.pages[i].truth), found + f, proposed + p
                why.update(w)
            print(f"| {label} | {n} | {_pct(found, n)} | {_pct(proposed, n)} | {n - proposed} "
                  f"| {proposed - found} |")
            if label == name:
                whys[name] = why
    print("\nVerdict misses by the reason (kind) of the best candidate not kept:")
    for name, why in whys.items():
        words = ", ".join(f"{k} {v}" for k, v in why.most_common()) or "none"
        print(f"  {name}: {words}")


def _cells(s: dict[str, float]) -> str:
    text = (f"{s['text_clean']:.0%} of {s['text_pages']}" if s["text_pages"] else "—")
    return (f"{round(s['recall'] * s['pictures'])} of {s['pictures']} ({s['recall']:.0%}) "
            f"| {s['median_iou']:.2f} | "
            + (f"{s['precision']:.0%} of {s['kept']}" if s["kept"] else "no crops") + f" | {text}")


def _chosen_words(chosen: Counter) -> str:
    total = sum(chosen.values())
    return "; ".join(f"{option_words((COMBOS.index(dict(zip(GRID, v, strict=True))), pd))}"
                     f" in {k} of {total} folds" for (v, pd), k in chosen.most_common(2)) + (
        "; ..." if len(chosen) > 2 else "")


def report_splits(sources: dict[str, Source]) -> None:
    """Per source: shipped PARAMS, book-grouped CV and leave-one-source-out."""
    data = {n: (s.raw, s.truths) for n, s in sources.items()}
    loso = loso_raw(data)
    train = loso_training(sources)
    print("\nBook-grouped CV (grid point chosen on the other books of the same source) and "
          "leave-one-source-out (chosen on the other sources, each weighing the same; "
          "composites and Moreno share woodcuts, so neither is fitted for the other). "
          "Picture-free pages: text pages, and on figures/early and other_sources the "
          "decorative pages too.\n")
    print(f"{NOTE}\n")
    print("| source | split | pictures found (IoU >= 0.5) | median IoU | crops that are pictures "
          "| picture-free pages with no crop | grid point |")
    print("|---|---|---|---|---|---|---|")
    for name, src in sources.items():
        held, chosen = grouped_cv_raw(src.raw, src.truths, [p.group for p in src.pages])
        opt, left = loso[name]
        shipped = [(p.truth, [r.box for r in f.regions if r.kept])
                   for p, f in zip(src.pages, src.found, strict=True)]
        rows = {name: list(range(len(src.pages)))}
        if src.split_parts:
            rows.update({f"{name}: {k}": v for k, v in src.parts.items()})
        for label, idx in rows.items():
            for split, res, point in (
                    ("shipped PARAMS (fitted on everything)", shipped, "shipped"),
                    (f"book-grouped CV ({len({src.pages[i].group for i in idx})} books)", held,
                     _chosen_words(chosen) if label == name else ""),
                    ("leave-one-source-out", left,
                     f"{option_words(opt)}, chosen on {', '.join(train[name])}"
                     if label == name else "")):
                print(f"| {label} | {split} | {_cells(score(res[i] for i in idx))} | {point} |")


def report(sources: dict[str, Source]) -> None:
    report_misses(sources)
    report_splits(sources)
