"""How far each constant of the figure finder sits from an edge on the shared pages.

    python -m bench.figure_fragility [--only NAME ...] [--factors 0.8 1.25]

The held-out scans differ from the shared ones, so a constant set where a 20% change
already moves the numbers is one a new library's scans may push over. Every numeric
field of the finder's typed configs (and each ``PARAMS`` entry) is scaled by each factor in
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
import dataclasses
import sys
import time
from collections.abc import Iterator

import numpy as np
from PIL import Image
from tqdm import tqdm

from archive import figures as F
from archive.figures.config import STAGES
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

# not rules: what the reader shows, a curator's knobs
SKIP = {("finder", "preview_side"), ("finder", "default_min_area"), ("finder", "threshold"),
        ("finder", "review_floor")}
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


def constants() -> Iterator[tuple[str, str, object]]:
    """(stage, field, value): every number and tuple of numbers in the finder's typed
    configs (``archive.figures.config.STAGES``), then each ``PARAMS`` entry (stage
    "PARAMS")."""
    for stage, config in STAGES.items():
        for f in dataclasses.fields(config):
            value = getattr(config, f.name)
            if (stage, f.name) in SKIP or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)) or (
                    isinstance(value, tuple) and value
                    and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                            for v in value)):
                yield stage, f.name, value
    for key, value in F.PARAMS.items():
        yield "PARAMS", key, value


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


def put(stage: str, key: str, value: object) -> None:
    """Set a constant wherever the finder reads it: a ``PARAMS`` entry in place; a config
    field by a changed copy of its stage's config, bound wherever the finder's modules
    hold the one it replaces (a value a module copied at import, such as a table of
    angles worked out once, is not moved)."""
    if stage == "PARAMS":
        F.PARAMS[key] = value
        return
    old = STAGES[stage]
    new = dataclasses.replace(old, **{key: value})
    for module in [m for name, m in sys.modules.items() if name.startswith("archive.figures")]:
        for attr, held in list(vars(module).items()):
            if held is old:
                setattr(module, attr, new)
    STAGES[stage] = new


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
    for owner, key, value in tqdm(todo, desc="constants", unit="constant"):
        where = owner
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
