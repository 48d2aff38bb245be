"""Should the shipped model carry the species head? The shipped weights with and without it.

    python bench/vet_species_head_compare.py [--model vet/model] [--bounds 3 1.5]
        [--close-up-sure 0.95] [--threads N]

The head (``vet.species.fit_species_head``: ImageNet's species mass as the prior plus a
bounded correction) is fitted on the shipped model's own ImageNet features of licensed
photos only: the training folds of conditions/ and extra/ ``use=train`` (the photos in
``val_split.csv`` and ``test_split.csv`` left out) and licensed_species/. Every variant
runs the current triage rules (``vet.pipeline.RULES``) on the same forward passes:
held-out test groups, the de-duplicated unlicensed measure rows, and the species
validation split (species top-1, cattle-only conditions on pigs, sheep and goats, FMD on
birds). ``--close-up-sure`` adds a variant where the head decides the species of a
close-up only at that confidence or more.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import (  # noqa: E402
    bench_model,
    held_out_items,
    measure_rows,
    photo_outputs,
    species_photos,
    tally,
)
from vet import pipeline  # noqa: E402
from vet.pipeline import decide  # noqa: E402
from vet.species import SPECIES, fit_species_head, species_probs  # noqa: E402
from vet.train_data import collect_species, read_split  # noqa: E402

SIX = ("chicken", "cow", "duck", "goat", "pig", "sheep")
CATTLE_ONLY = {"healthy", "lumpy_skin", "mastitis", "pinkeye"}


def fit_head(model, src: str, data: Path, bound: float) -> dict:
    """The head on licensed photos of the training folds only."""
    from vet.train import collect

    held = {str(it.path) for f in ("test_split.csv", "val_split.csv")
            for it in read_split(Path(src) / f, data / "livestock")}
    items = [it for it in collect([data / "livestock/conditions/labels.csv",
                                   data / "livestock/extra/labels.csv"])
             if str(it.path) not in held]
    items += collect_species(data / "livestock/licensed_species/labels.csv")
    names = [{"cattle": "cow"}.get(it.species, it.species) for it in items]
    keep = [i for i, s in enumerate(names) if s in SPECIES]
    rows, pooled, kept = photo_outputs(model, [items[i].path for i in keep], "licensed photos")
    y = np.array([SPECIES.index(names[keep[k]]) for k in kept])
    ref = torch.stack([r.imagenet_probs.float() for r in rows])
    return fit_species_head(pooled, ref, y, bound=bound)


def with_head(rows: list, pooled: torch.Tensor, head: dict | None) -> list:
    if head is None:
        return rows
    ref = torch.stack([r.imagenet_probs.float() for r in rows])
    sp = species_probs(ref, pooled, head["weight"], head["bias"], head["trained"], head["bound"])
    return [r._replace(species_probs=sp[j]) for j, r in enumerate(rows)]


def measure(sets: dict, head: dict | None) -> dict:
    """The numbers of one variant on every set."""
    out = {}
    rows, pooled, truths, _ = sets["test"]
    ts = [decide("x", *a) for a in with_head(rows, pooled, head)]
    out["test"] = tally(ts, truths)
    rows, pooled, truths, _ = sets["measure"]
    ts = [decide("x", *a) for a in with_head(rows, pooled, head)]
    out["measure"] = tally(ts, truths)
    fmd = [t for t, y in zip(ts, truths, strict=True) if y == "fmd"]
    out["fmd_flagged"] = sum(t.condition == "fmd" for t in fmd)
    out["fmd_n"] = len(fmd)
    rows, pooled, species, _ = sets["species"]
    args = with_head(rows, pooled, head)
    ts = [decide("x", *a) for a in args]
    ev = torch.stack([pipeline.species_evidence(a) for a in args])
    pred = ev[:, [SPECIES.index(s) for s in SIX]].argmax(-1).tolist()
    sp = np.array(species)
    out["top1"] = {s: float(np.mean([SIX[p] == s for p, y in zip(pred, species, strict=True)
                                     if y == s])) for s in SIX}
    out["cattle_only"] = {s: int(sum(t.condition in CATTLE_ONLY for t, y in
                                     zip(ts, species, strict=True) if y == s))
                          for s in ("pig", "sheep", "goat")}
    out["bird_fmd"] = int(sum(t.condition == "fmd" for t, y in zip(ts, sp, strict=True)
                              if y in ("chicken", "duck")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--bounds", type=float, nargs="+", default=[3.0, 1.5])
    ap.add_argument("--close-up-sure", type=float, default=0.95)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    data, src, model = bench_model(args)
    answer = set(model.config.answer_labels)
    licensed, test = held_out_items(Path(src), data)
    test = [it for it in test if it.label in answer]
    sets = {}
    rows, pooled, kept = photo_outputs(model, [it.path for it in test], "held-out test photos")
    sets["test"] = (rows, pooled, [test[k].label for k in kept], None)
    mrows, _ = measure_rows(data, licensed)
    rows, pooled, kept = photo_outputs(model, [data / r["file"] for r in mrows], "measure rows")
    sets["measure"] = (rows, pooled, [mrows[k]["label"] for k in kept], None)
    paths, species = species_photos(data, "validation", SIX)
    rows, pooled, kept = photo_outputs(model, paths, "species validation")
    sets["species"] = (rows, pooled, [species[k] for k in kept], None)

    variants: list[tuple[str, dict | None, float | None]] = [("no head (shipped)", None, None)]
    for b in args.bounds:
        head = fit_head(model, src, data, b)
        variants.append((f"head, bound {b:g}", head, None))
        if args.close_up_sure:
            variants.append((f"head, bound {b:g}, close-up at >= {args.close_up_sure:g}", head,
                             args.close_up_sure))
    original = pipeline.is_close_up
    print("variant | held-out: answered / right of answered / wrong | measure: right / wrong"
          " | FMD answered or warned | pig/sheep/goat cattle-only | birds FMD | species top-1")
    for name, head, sure in variants:
        if sure is not None:
            def close_up(probs, sp, like, mc=pipeline.MIN_CONFIDENCE, sure=sure):
                return original(probs, sp, like, max(mc, sure))
            pipeline.is_close_up = close_up
        r = measure(sets, head)
        pipeline.is_close_up = original
        t, m, c = r["test"], r["measure"], r["cattle_only"]
        print(f"{name} | {t['answered']:.3f} / {t['right_of_answered']:.3f} / {t['wrong']:.3f}"
              f" | {m['right']:.3f} / {m['wrong']:.3f} | {r['fmd_flagged']} of {r['fmd_n']} | "
              f"{c['pig']}/{c['sheep']}/{c['goat']} | {r['bird_fmd']} | "
              f"{np.mean(list(r['top1'].values())):.3f} ("
              + ", ".join(f"{k} {v:.2f}" for k, v in r["top1"].items()) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
