"""How far each constant of the figure finder sits from an edge on the shared pages.

    python -m bench.figure_fragility [--only NAME ...] [--factors 0.8 1.25]

The held-out scans differ from the shared ones, so a constant set where a 20% change
already moves the numbers is one a new library's scans may push over. Every numeric
constant of the finder's modules (and each ``PARAMS`` entry) is scaled by each factor in
turn (an integer moves one step at least, a share stays under 1), and the finder runs
again on every labelled page: the early books as published and made five other ways
(``bench.figure_robustness``: lighter, low contrast, cool white balance, skew 1.5°,
turned a quarter), the chapbooks, the library-scan composites and their target frames,
the composites, and the DTA, OCR-D and ufal text pages. Printed per change: how many
pages keep other crops, and what moved in each set's four numbers (as
``bench.figure_eval``: found >= 2%, median IoU, crops that are pictures, text pages with
no crop). Last, the constants nearest an edge: those whose change lowers a number by 0.02
or more on some set. Test use only: it shows where a rule stands, never what to set it
to (a constant moved to the middle of its flat stretch is a guess about scans no one has
measured). About 25 s a change on one core.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
from PIL import Image
from tqdm import tqdm

from archive import figures as F
from bench import composites, scans
from bench.figure_eval import (
    DATA,
    Box,
    early_pages,
    is_text_label,
    labelled_pages,
    load_preview,
    moreno_pages,
    score,
)
from bench.figure_robustness import rescan, scan_preview, truth_as

MODULES = ("page_ink", "ornaments", "verdicts", "picture_frames", "picture_boxes", "figures",
           "page_extent", "text_rhythm", "colour_ink", "ring_stamps", "charts", "second_look")
SKIP = {"PREVIEW_SIDE", "_MIN_SIDE", "DEFAULT_MIN_AREA", "THRESHOLD", "REVIEW_FLOOR",
        "WHOLE"}  # not rules: what the reader shows, a curator's knobs, the whole page
EARLY_WAYS = ("as published", "lighter (gamma 0.6)", "low contrast", "cool white balance",
              "skew 1.5 deg", "turned a quarter")
NUMBERS = ("recall2", "median_iou", "precision", "text_clean")
EDGE = 0.02

Sets = dict[str, list[tuple[list[Box], Image.Image]]]


def labelled_sets() -> Sets:
    """(truth, preview) per page, by set."""
    sets: Sets = {}
    for p in early_pages():
        data = (DATA / p.name).read_bytes()
        for way in EARLY_WAYS:
            sets.setdefault(f"early, {way}", []).append(
                (truth_as(p, way), scan_preview(rescan(data, way))))
    sets["chapbooks"] = [(p.truth, load_preview(DATA / p.name)) for p in moreno_pages()]
    sets["library scans"] = [(sc.boxes, sc.preview()) for sc in scans.build(per_cell=4)]
    sets["target frames"] = [([], scans.target_frame(bg, seed).preview())
                             for bg in scans.BACKGROUNDS for seed in range(6)]
    sets["composites"] = [(c.boxes, c.preview()) for c in composites.build(per_cell=3)]
    for source, label, path in labelled_pages():
        if is_text_label(label):
            sets.setdefault(f"text pages, {source}", []).append(([], load_preview(path)))
    return sets


def kept(sets: Sets) -> dict[str, list[tuple[Box, ...]]]:
    return {name: [tuple(tuple(round(v, 4) for v in r.box) for r in F.figures(pv))
                   for _truth, pv in pages] for name, pages in sets.items()}


def numbers(sets: Sets, found: dict[str, list[tuple[Box, ...]]]) -> dict[str, dict]:
    return {name: score((truth, list(k)) for (truth, _pv), k in zip(pages, found[name],
                                                                    strict=True))
            for name, pages in sets.items()}


def constants() -> Iterator[tuple[ModuleType | dict, str, object]]:
    """(where it lives, its name, its value): the numbers and tuples of numbers each module
    sets itself (not those it imports), then ``PARAMS``."""
    for name in MODULES:
        module = importlib.import_module(f"archive.{name}")
        for key in _assigned(module):
            value = getattr(module, key)
            if key in SKIP or not key.isupper() or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)) or (
                    isinstance(value, tuple) and value
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                            for v in value)):
                yield module, key, value
    for key, value in F.PARAMS.items():
        yield F.PARAMS, key, value


def _assigned(module: ModuleType) -> list[str]:
    """The names a module's own top-level assignments set, in order."""
    tree = ast.parse(Path(module.__file__).read_text())
    names = []
    for node in tree.body:
        for target in getattr(node, "targets", []):
            names += [t.id for t in (target.elts if isinstance(target, ast.Tuple) else [target])
                      if isinstance(t, ast.Name)]
    return names


def scaled(value: object, factor: float) -> object:
    """The value times the factor; an integer moves one step at least, and a share (0-1)
    stays one: pushed to 1 or past it, it goes halfway there instead (0.9 -> 0.95)."""
    if isinstance(value, tuple):
        return tuple(scaled(v, factor) for v in value)
    if isinstance(value, int):
        moved = int(round(value * factor))
        return moved if moved != value else value + (1 if factor > 1 else -1)
    if 0 < value < 1 <= value * factor:
        return (value + 1) / 2
    return value * factor


def put(where: ModuleType | dict, key: str, value: object) -> None:
    """Set a constant wherever the finder reads it: its module, and every finder module
    that imported the same object under the same name."""
    if isinstance(where, dict):
        where[key] = value
        return
    old = getattr(where, key)
    for name in MODULES:
        module = importlib.import_module(f"archive.{name}")
        if getattr(module, key, None) is old:
            setattr(module, key, value)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", default=[], help="constants to change (default all)")
    ap.add_argument("--factors", nargs="*", type=float, default=[0.8, 1.25])
    args = ap.parse_args()
    t0 = time.time()
    sets = labelled_sets()
    base = kept(sets)
    shipped = numbers(sets, base)
    print(f"{sum(map(len, sets.values()))} pages in {len(sets)} sets, read in "
          f"{time.time() - t0:.0f} s; as shipped (found >= 2% / median IoU / crops that are "
          "pictures / text pages with no crop):")
    for name, s in shipped.items():
        print(f"  {name:32s} " + " / ".join(f"{s[k]:.3f}" for k in NUMBERS))
    todo = [(w, k, v) for w, k, v in constants() if not args.only or k in args.only]
    edges: list[tuple[float, str]] = []
    for where, key, value in tqdm(todo, desc="constants", unit="constant"):
        owner = "PARAMS" if isinstance(where, dict) else where.__name__.split(".")[-1]
        for factor in args.factors:
            changed = scaled(value, factor)
            put(where, key, changed)
            try:
                found = kept(sets)
            finally:
                put(where, key, value)
            now = numbers(sets, found)
            moved, worst = [], 0.0
            for name in sets:
                pages = sum(a != b for a, b in zip(base[name], found[name], strict=True))
                if not pages:
                    continue
                delta = {k: now[name][k] - shipped[name][k] for k in NUMBERS}
                worst = min(worst, *delta.values())
                words = " ".join(f"{k} {d:+.3f}" for k, d in delta.items() if abs(d) >= 5e-4)
                moved.append(f"{name}: {pages} pages{', ' + words if words else ''}")
            shown = np.round(changed, 4).tolist() if not isinstance(changed, int) else changed
            tqdm.write(f"{owner}.{key} {value} -> {shown}: "
                       + ("; ".join(moved) if moved else "nothing moved"))
            if worst <= -EDGE:
                edges.append((worst, f"{owner}.{key} x{factor:g}"))
    print(f"Nearest an edge (a change that lowers a number by {EDGE} or more on some set):")
    for worst, what in sorted(edges):
        print(f"  {what:40s} {worst:+.3f}")
    if not edges:
        print("  none")


if __name__ == "__main__":
    main()
