"""How the constants of ``vet.pipeline.cattle_evidence`` were chosen, and what they cost.

    python bench/vet_cattle_rule.py [--model vet/model] [--threads N]

The rule withholds a whole-animal condition (healthy, lumpy skin: cattle only) unless
ImageNet clearly sees cattle. Its constants are chosen on photos that are not reported
as results: the TRAIN split of livestock/species (no licence: measured, never trained
on; the benefit is fewer pig, sheep and goat photos given a cattle-only condition) and
the licensed validation photos of ``val_split.csv`` (the cost: right answers lost). The
species validation split, the held-out test groups and the unlicensed field sources
are reported by ``bench/vet_eval.py`` only. The model runs once per photo; the grid is
then swept over the cached outputs.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import bench_model, photo_outputs, species_photos, tally  # noqa: E402
from vet import pipeline  # noqa: E402
from vet.pipeline import decide  # noqa: E402
from vet.train_data import read_split  # noqa: E402

CATTLE_ONLY = {"healthy", "lumpy_skin", "mastitis", "pinkeye"}
GRID = {"WHOLE_SEEN": (0.1, 0.2, 0.3), "CATTLE_SEEN": (0.1, 0.2, 0.3),
        "CAPRINE_SHARE": (0.1, 0.15, 0.2), "WHOLE_SURE": (0.85, 0.9, 0.95)}


def score(species_rows: list, species: list[str], val_rows: list, truths: list[str]) -> dict:
    """Pig/sheep/goat photos given a cattle-only condition (sure or not), and the triage of
    the licensed validation photos, under the constants now set in ``vet.pipeline``."""
    ts = [decide("x", *a) for a in species_rows]
    bad = {sp: sum(t.condition in CATTLE_ONLY for t, s in zip(ts, species, strict=True)
                   if s == sp) for sp in ("pig", "sheep", "goat")}
    cows = sum(t.status == "ok" for t, s in zip(ts, species, strict=True) if s == "cow")
    val = tally([decide("x", *a) for a in val_rows], truths)
    return {"cattle_only": bad, "cows_ok": cows, **{k: val[k] for k in
                                                    ("answered", "right", "wrong")}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    data, src, model = bench_model(args)
    answer = set(model.config.answer_labels)
    sp_paths, sp_names = species_photos(data, "train")
    sp_rows, _, kept = photo_outputs(model, sp_paths, "species train split")
    sp_names = [sp_names[k] for k in kept]
    val = [it for it in read_split(Path(src) / "val_split.csv", data / "livestock")
           if it.label in answer]
    val_rows, _, kept = photo_outputs(model, [it.path for it in val], "licensed validation photos")
    truths = [val[k].label for k in kept]

    shipped = {k: getattr(pipeline, k) for k in GRID}
    rules = pipeline.RULES
    pipeline.RULES = tuple(r for r in rules if r is not pipeline.cattle_evidence)
    base = score(sp_rows, sp_names, val_rows, truths)
    pipeline.RULES = rules
    print(f"without the rule: species train pig/sheep/goat given a cattle-only condition "
          f"{base['cattle_only']} (of 500 each), cows ok {base['cows_ok']}; licensed "
          f"validation answered {base['answered']:.3f} right {base['right']:.3f} "
          f"wrong {base['wrong']:.3f}")
    print("WHOLE_SEEN CATTLE_SEEN CAPRINE_SHARE WHOLE_SURE | pig/sheep/goat cattle-only "
          "(sum) cows ok | val answered right wrong")
    for values in itertools.product(*GRID.values()):
        for k, v in zip(GRID, values, strict=True):
            setattr(pipeline, k, v)
        r = score(sp_rows, sp_names, val_rows, truths)
        mark = "  <- shipped" if dict(zip(GRID, values, strict=True)) == shipped else ""
        print(" ".join(f"{v:>5}" for v in values) + f" | {r['cattle_only']} "
              f"({sum(r['cattle_only'].values())}) {r['cows_ok']} | {r['answered']:.3f} "
              f"{r['right']:.3f} {r['wrong']:.3f}{mark}")
    for k, v in shipped.items():
        setattr(pipeline, k, v)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
