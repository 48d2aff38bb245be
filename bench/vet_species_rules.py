"""A species head for cattle close-ups: which head and which close-up gate, replayed on
cached forward passes (``bench/vet_species_cache.py`` first).

    python bench/vet_species_rules.py [--cache /work/scratch-vet] [--bounds 1.5 3]
        [--top 5] [--json out.json]

Heads (``vet.species.fit_species_head``, untrained species keep ImageNet's probability)
are fitted on the cached ``licensed`` set only (training folds of the licensed photos),
with goats and pigs (a dozen licensed photos each), and chickens (50), left to ImageNet, bounds
``--bounds`` and class weights ``--balance`` (1: every species the same, 0.5: square
root). For each head, a grid of the species gate (``vet.pipeline.HEAD_CATTLE``,
``HEAD_NEIGHBOURS``, ``HEAD_SURE``, ``HEAD_CLOSE_UP_ONLY``) is
scored on the licensed **validation** photos and the **train** split of livestock/species
only; a setting is eligible when it is no worse than today (no head) on any of: validation
right-of-answered, wrong, FMD answered or warned; pig / sheep / goat given a cattle-only
condition, birds given FMD and species top-1 on the species train split. The eligible
setting with the most validation answers is chosen, and it (and the next best) is then
reported on the held-out test groups, the unlicensed measure rows and the species
validation split, beside today.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import tally  # noqa: E402
from vet import pipeline  # noqa: E402
from vet.pipeline import decide  # noqa: E402
from vet.species import SPECIES, fit_species_head, species_probs  # noqa: E402

SIX = ("chicken", "cow", "duck", "goat", "pig", "sheep")
CATTLE_ONLY = {"healthy", "lumpy_skin", "mastitis", "pinkeye"}
GRID = {"HEAD_CATTLE": (0.0, 0.5),
        "HEAD_NEIGHBOURS": (0.2, 0.5),
        "HEAD_SURE": (0.8, 0.9, 0.95),
        "HEAD_CLOSE_UP_ONLY": (True, False)}
# Species left to ImageNet's own probability beside ducks, horses and camelids (which have
# no licensed photo): goats have 12 licensed close-ups, pigs 13 FMD snouts and feet.
UNTRAINED = (("goat", "pig"), ("chicken", "goat", "pig"))


def load(cache: Path, name: str) -> dict:
    return torch.load(cache / f"{name}.pt", weights_only=False)


def fit(lic: dict, bound: float, untrained: tuple[str, ...], balance: float) -> dict:
    """A head on the licensed training-fold photos; ``untrained`` species keep ImageNet's
    probability (their few photos left out)."""
    keep = [i for i, s in enumerate(lic["truths"]) if s not in untrained]
    ref = torch.stack([lic["rows"][i].imagenet_probs.float() for i in keep])
    y = np.array([SPECIES.index(lic["truths"][i]) for i in keep])
    return fit_species_head(lic["pooled"][keep], ref, y, bound=bound, balance=balance)


def attach(s: dict, head: dict | None) -> list:
    if head is None:
        return s["rows"]
    ref = torch.stack([r.imagenet_probs.float() for r in s["rows"]])
    sp = species_probs(ref, s["pooled"], head["weight"], head["bias"], head["trained"],
                       head["bound"])
    return [r._replace(species_probs=sp[j]) for j, r in enumerate(s["rows"])]


def conditions(rows: list, truths: list[str]) -> dict:
    ts = [decide("x", *a) for a in rows]
    out = tally(ts, truths)
    fmd = [t for t, y in zip(ts, truths, strict=True) if y == "fmd"]
    out["fmd_flagged"] = sum(t.condition == "fmd" for t in fmd)
    out["fmd_n"] = len(fmd)
    out["triage"] = ts
    return out


def species_set(rows: list, names: list[str]) -> dict:
    ts = [decide("x", *a) for a in rows]
    ev = torch.stack([pipeline.species_evidence(a) for a in rows])
    pred = ev[:, [SPECIES.index(s) for s in SIX]].argmax(-1).tolist()
    top1 = {s: float(np.mean([SIX[p] == s for p, y in zip(pred, names, strict=True) if y == s]))
            for s in SIX}
    return {"top1": top1, "top1_mean": float(np.mean(list(top1.values()))),
            "cattle_only": {s: int(sum(t.condition in CATTLE_ONLY for t, y in
                                       zip(ts, names, strict=True) if y == s))
                            for s in ("pig", "sheep", "goat")},
            "bird_fmd": int(sum(t.condition == "fmd" for t, y in zip(ts, names, strict=True)
                                if y in ("chicken", "duck")))}


def choose_score(val: dict, sp: dict) -> tuple:
    return (val["answered"], val["right_of_answered"], -val["wrong"])


def eligible(val: dict, sp: dict, base_val: dict, base_sp: dict) -> bool:
    return (val["right_of_answered"] >= base_val["right_of_answered"]
            and val["wrong"] <= base_val["wrong"]
            and val["fmd_flagged"] >= base_val["fmd_flagged"]
            and all(sp["cattle_only"][s] <= base_sp["cattle_only"][s] for s in sp["cattle_only"])
            and sp["bird_fmd"] <= base_sp["bird_fmd"] and sp["top1_mean"] >= base_sp["top1_mean"])


def set_params(params: dict) -> None:
    for k, v in params.items():
        setattr(pipeline, k, v)


def per_source(ts: list, truths: list[str], sources: list[str]) -> dict:
    out = {}
    for src in sorted(set(sources)):
        idx = [i for i, s in enumerate(sources) if s == src]
        out[src] = tally([ts[i] for i in idx], [truths[i] for i in idx])
    return out


def report(name: str, sets: dict, head: dict | None) -> dict:
    test = conditions(attach(sets["test"], head), sets["test"]["truths"])
    meas = conditions(attach(sets["measure"], head), sets["measure"]["truths"])
    spv = species_set(attach(sets["species_val"], head), sets["species_val"]["truths"])
    reasons = Counter((t.reason_code or "ok") for t in test["triage"])
    src = per_source(test["triage"], sets["test"]["truths"], sets["test"]["sources"])
    msrc = per_source(meas["triage"], sets["measure"]["truths"], sets["measure"]["sources"])
    c = spv["cattle_only"]
    print(f"{name} | {test['answered']:.3f} / {test['right_of_answered']:.3f} / "
          f"{test['wrong']:.3f} | {meas['right']:.3f} / {meas['wrong']:.3f} | "
          f"{meas['fmd_flagged']} of {meas['fmd_n']} | {c['pig']}/{c['sheep']}/{c['goat']} | "
          f"{spv['bird_fmd']} | {spv['top1_mean']:.3f} ("
          + ", ".join(f"{k} {v:.2f}" for k, v in spv["top1"].items()) + ")", flush=True)
    print("   test per source: " + "; ".join(
        f"{s} {r['answered']:.3f}/{r['right_of_answered']:.3f}/{r['wrong']:.3f}"
        for s, r in src.items()))
    print("   measure per source: " + "; ".join(
        f"{s} {r['right']:.3f}/{r['wrong']:.3f}" for s, r in msrc.items()))
    print("   test reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    for d in (test, meas):
        d.pop("triage")
    return {"test": test, "measure": meas, "species_val": spv, "test_sources": src,
            "measure_sources": msrc, "test_reasons": dict(reasons)}


def report_only(args: argparse.Namespace) -> int:
    """One named setting on the report sets (no choice made)."""
    torch.set_num_threads(1)
    cache = Path(args.cache)
    sets = {n: load(cache, n) for n in ("licensed", "test", "measure", "species_val")}
    head = fit(sets["licensed"], args.bounds[0], ("goat", "pig"), args.balance[0])
    params = {k: float(v) for k, v in (kv.split("=") for kv in args.report)}
    shipped = {k: getattr(pipeline, k) for k in GRID}
    report("no head (today)", sets, None)
    set_params(params)
    report(f"bound {args.bounds[0]:g}, balance {args.balance[0]:g}, ImageNet for goat+pig, "
           + " ".join(f"{k}={v:g}" for k, v in params.items()), sets, head)
    set_params(shipped)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default="/work/scratch-vet")
    ap.add_argument("--bounds", type=float, nargs="+", default=[1.5, 3.0])
    ap.add_argument("--balance", type=float, nargs="+", default=[1.0, 0.5])
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--json", default=None)
    ap.add_argument("--report", nargs="+", metavar="K=V", default=None,
                    help="skip the choice: report the head of --bounds[0] / --balance[0] "
                         "(goat and pig left to ImageNet) with these settings, e.g. "
                         "HEAD_NEIGHBOURS=0.8 HEAD_SURE=0.95")
    args = ap.parse_args()
    if args.report:
        return report_only(args)
    torch.set_num_threads(1)
    cache = Path(args.cache)
    sets = {n: load(cache, n) for n in ("val", "species_train", "licensed", "test",
                                        "measure", "species_val")}
    shipped = {k: getattr(pipeline, k) for k in GRID}
    base_val = conditions(sets["val"]["rows"], sets["val"]["truths"])
    base_sp = species_set(sets["species_train"]["rows"], sets["species_train"]["truths"])
    print("choice (validation + species train): head | HEAD_CATTLE HEAD_NEIGHBOURS HEAD_SURE "
          "HEAD_CLOSE_UP_ONLY | val answered / right of answered / wrong / FMD flagged | "
          "species train pig/sheep/goat cattle-only, birds FMD, top-1")
    print(f"no head (today) | - | {base_val['answered']:.3f} / {base_val['right_of_answered']:.3f}"
          f" / {base_val['wrong']:.3f} / {base_val['fmd_flagged']} | {base_sp['cattle_only']}, "
          f"{base_sp['bird_fmd']}, {base_sp['top1_mean']:.3f}", flush=True)
    heads = {f"bound {b:g}, balance {bal:g}, ImageNet for {'+'.join(u) or 'none'}":
             fit(sets["licensed"], b, u, bal)
             for b in args.bounds for u in UNTRAINED for bal in args.balance}
    found = []
    for hname, head in heads.items():
        val_rows = attach(sets["val"], head)
        sp_rows = attach(sets["species_train"], head)
        for combo in itertools.product(*GRID.values()):
            params = dict(zip(GRID, combo, strict=True))
            set_params(params)
            val = conditions(val_rows, sets["val"]["truths"])
            sp = species_set(sp_rows, sets["species_train"]["truths"])
            ok = eligible(val, sp, base_val, base_sp)
            val.pop("triage")
            found.append((ok, choose_score(val, sp), hname, params, val, sp))
            print(f"{hname} | {' '.join(f'{v:g}' for v in combo)} | {val['answered']:.3f} / "
                  f"{val['right_of_answered']:.3f} / {val['wrong']:.3f} / {val['fmd_flagged']} "
                  f"| {sp['cattle_only']}, {sp['bird_fmd']}, {sp['top1_mean']:.3f}"
                  f"{'  eligible' if ok else ''}",
                  flush=True)
    set_params(shipped)
    ranked = sorted((f for f in found if f[0]), key=lambda f: f[1], reverse=True)
    print("\nreport (test groups | measure rows | species validation): variant | held-out "
          "answered / right of answered / wrong | measure right / wrong | FMD answered or warned"
          " | pig/sheep/goat cattle-only | birds FMD | species top-1")
    out = {"today": report("no head (today)", sets, None), "chosen": []}
    for _, _, hname, params, val, sp in ranked[:args.top]:
        set_params(params)
        r = report(f"{hname}, " + " ".join(f"{k}={v:g}" for k, v in params.items()), sets,
                   heads[hname])
        out["chosen"].append({"head": hname, "params": params, "val": val, "species_train": sp,
                              **r})
    set_params(shipped)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
