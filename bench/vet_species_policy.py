"""The species policy and the FMD warning, per source, before and after a change of the rules
(issue #62): replays ``decide`` on cached forward passes, so a rule change costs seconds.

    python bench/vet_species_cache.py            # once: the forward passes (~5 min, 1 thread)
    python bench/vet_species_policy.py [--cache /work/scratch-vet] [--before REV]
        [--sets test measure species_val ...] [--set NAME=VALUE ...]

``--before REV`` replays the rules of ``vet/pipeline.py`` as committed at REV (``git show``)
beside today's, on the same model outputs. ``--set`` changes a ``vet.pipeline`` constant
for a sweep (``--set BIRD_SEEN=0.6``). The scanned pages (the not-livestock gate) are run once
and cached beside the other sets as ``pages.pt``.

Per source, the figures the issue tracks: answered (status ok), right of answered,
confidently wrong (ok, wrong condition), FMD photos answered or warned (FMD named, as the
answer or as the warning), FMD answered ``ok`` with species "unknown", lumpy-skin photos
refused for the species (a species reason code or ``maybe_not_cattle``), answers whose
species field names another species than their advice ("This looks like a pig"); on the
species photos: pig / sheep / goat given a cattle-only condition (sure or not), a sure FMD
answer on them, chickens and ducks given FMD (the answer or the warning), cows answered;
on the scanned pages: not_livestock.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vet import pipeline  # noqa: E402

CATTLE_ONLY = {"healthy", "lumpy_skin", "mastitis", "pinkeye"}
SPECIES_CODES = {"species_unclear", "species_not_screened", "species_doubt",
                 "no_sign_for_species", "maybe_not_cattle"}
CONDITION_SETS = ("test", "val", "measure")
SPECIES_SETS = ("species_val", "species_train")
LOOKS_LIKE = re.compile(r"This looks like an? (\w+)\.")


def rules_at(rev: str):
    """``vet.pipeline`` as committed at ``rev``, loaded beside today's (same tables)."""
    text = subprocess.run(["git", "show", f"{rev}:vet/pipeline.py"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / f"pipeline_{rev}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"pipeline_{rev}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    mod.CONDITIONS_FILE = ROOT / "vet" / "conditions.json"
    mod.table.cache_clear()
    return mod


def advice_species(t) -> str | None:
    """The species code the English advice names ("This looks like a pig"), if any."""
    m = LOOKS_LIKE.search((t.advice or {}).get("en", ""))
    if not m:
        return None
    names = {v["en"]: k for k, v in pipeline.table()["species_names"].items()}
    return names.get(m.group(1), m.group(1))


def disagrees(t) -> bool:
    named = advice_species(t)
    return named is not None and t.species != named


def condition_figures(ts: list, truths: list[str]) -> dict:
    c: Counter = Counter()
    for t, y in zip(ts, truths, strict=True):
        c["n"] += 1
        if t.status == "ok":
            c["answered"] += 1
            c["right" if t.condition == y else "wrong"] += 1
            if t.condition == "fmd" and t.species == "unknown":
                c["fmd_ok_unknown"] += 1
        if t.status == "not_livestock":
            c["not_livestock"] += 1
        if y == "fmd":
            c["fmd_n"] += 1
            if t.condition == "fmd":
                c["fmd_answered" if t.status == "ok" else "fmd_warned"] += 1
        if y == "lumpy_skin":
            c["lumpy_n"] += 1
            c["lumpy_species_refused"] += t.reason_code in SPECIES_CODES
        c["disagree"] += disagrees(t)
    return dict(c)


def species_figures(ts: list, names: list[str]) -> dict:
    out: dict = defaultdict(Counter)
    for t, sp in zip(ts, names, strict=True):
        c = out[sp]
        c["n"] += 1
        c["ok"] += t.status == "ok"
        c["cattle_only"] += t.condition in CATTLE_ONLY
        c["sure_fmd"] += t.status == "ok" and t.condition == "fmd"
        c["fmd_named"] += t.condition == "fmd"
        c["disagree"] += disagrees(t)
    return {k: dict(v) for k, v in out.items()}


def load(cache: Path, name: str) -> dict:
    return torch.load(cache / f"{name}.pt", weights_only=False)


def pages_set(cache: Path) -> dict:
    """The scanned pages of shared/data/pages, run once and cached."""
    path = cache / "pages.pt"
    if path.is_file():
        return load(cache, "pages")
    from bench.vet_eval import bench_model, photo_outputs

    data, _, model = bench_model(argparse.Namespace(model=None, threads=1))
    pages = sorted(p for p in (data / "pages").rglob("*") if p.suffix.lower() in
                   (".jpg", ".jpeg", ".png"))
    rows, _, kept = photo_outputs(model, pages, "scanned pages")
    out = {"rows": rows, "truths": ["page"] * len(rows), "sources": ["pages"] * len(rows),
           "files": [str(pages[k]) for k in kept]}
    torch.save(out, path)
    return out


def run_rules(mod, s: dict) -> list:
    return [mod.decide(f, *a) for a, f in zip(s["rows"], s["files"], strict=True)]


def by_source(s: dict, ts: list) -> dict[str, dict]:
    groups: dict = defaultdict(list)
    for k, src in enumerate(s["sources"]):
        groups[src].append(k)
        if " | " in src:  # a measure row: its repository as a whole too
            groups[src.split(" | ")[0] + " (all)"].append(k)
    groups["all"] = list(range(len(ts)))
    return {g: condition_figures([ts[k] for k in ks], [s["truths"][k] for k in ks])
            for g, ks in sorted(groups.items())}


def fmt_cond(c: dict) -> str:
    n, a = c.get("n", 0), c.get("answered", 0)
    return (f"answered {a}/{n} ({a / max(n, 1):.3f}) right-of-answered "
            f"{c.get('right', 0) / max(a, 1):.3f} wrong {c.get('wrong', 0)}"
            + (f" | FMD {c.get('fmd_answered', 0)}+{c.get('fmd_warned', 0)}"
               f"/{c['fmd_n']}" if c.get("fmd_n") else "")
            + (f" | lumpy species-refused {c['lumpy_species_refused']}/{c['lumpy_n']}"
               if c.get("lumpy_n") else "")
            + f" | FMD ok unknown {c.get('fmd_ok_unknown', 0)} | not_livestock "
              f"{c.get('not_livestock', 0)} | species/advice differ {c.get('disagree', 0)}")


def fmt_species(c: dict) -> str:
    return (f"ok {c.get('ok', 0)}/{c['n']} cattle-only {c.get('cattle_only', 0)} sure-FMD "
            f"{c.get('sure_fmd', 0)} FMD-named {c.get('fmd_named', 0)} species/advice differ "
            f"{c.get('disagree', 0)}")


def report(mods: dict, sets: dict) -> None:
    for name, s in sets.items():
        res = {label: run_rules(mod, s) for label, mod in mods.items()}
        print(f"\n== {name} ({len(s['rows'])} photos) ==")
        if name in CONDITION_SETS:
            figs = {label: by_source(s, ts) for label, ts in res.items()}
            for src in next(iter(figs.values())):
                print(f"{src}")
                for label, f in figs.items():
                    print(f"  {label:>6}: {fmt_cond(f[src])}")
        elif name in SPECIES_SETS:
            figs = {label: species_figures(ts, s["truths"]) for label, ts in res.items()}
            for sp in sorted(next(iter(figs.values()))):
                print(f"{sp}")
                for label, f in figs.items():
                    print(f"  {label:>6}: {fmt_species(f[sp])}")
        else:
            for label, ts in res.items():
                nl = sum(t.status == "not_livestock" for t in ts)
                print(f"  {label:>6}: not_livestock {nl}/{len(ts)}; species/advice differ "
                      f"{sum(map(disagrees, ts))}")


def bird_thresholds(cache: Path) -> None:
    """How ``BIRD_SEEN`` and ``FMD_LIKE`` (a rule since removed) were measured: on the
    licensed photos only (the chickens of licensed_species/ against the FMD photos of the
    training folds and of ``val_split.csv``), then checked on the chickens and ducks of
    livestock/species (no licence: measured, never chosen on)."""
    import csv

    from bench.vet_eval import shared
    from vet.gate import bird_mass, species_scores
    from vet.species import SPECIES

    data = shared()
    label = {}
    for sub in ("conditions", "extra"):
        with (data / "livestock" / sub / "labels.csv").open(newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                path = (data / "livestock" / sub / r["file"] if sub == "conditions"
                        else data / r["file"])
                label[str(path)] = r["label"]
    chickens, fmd = [], []
    for name in ("licensed", "val"):
        s = load(cache, name)
        for a, y, f in zip(s["rows"], s["truths"], s["files"], strict=True):
            b = float(bird_mass(a.imagenet_probs))
            p = dict(zip(a.labels, a.cond_probs, strict=True))[pipeline.FMD]
            nb = (a.neighbours or {}).get(pipeline.FMD, 0.0)
            if name == "licensed" and y == "chicken":
                chickens.append((b, p, nb))
            if (y if name == "val" else label.get(f)) == pipeline.FMD:
                fmd.append((b, p, nb))
    print(f"licensed chickens: {len(chickens)}; licensed FMD photos (training folds and "
          f"val_split.csv): {len(fmd)}, most birdlike {max(b for b, _, _ in fmd):.2f}")
    print("bird mass at least | chickens | FMD photos | FMD photos with P(FMD) >= FMD_ALERT")
    for t in (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75):
        print(f"{t:>18} | {sum(b >= t for b, _, _ in chickens):>8} | "
              f"{sum(b >= t for b, _, _ in fmd):>10} | "
              f"{sum(b >= t and p >= pipeline.FMD_ALERT for b, p, _ in fmd)}")
    alert = [nb for _, p, nb in fmd if p >= pipeline.FMD_ALERT]
    print(f"FMD share of the nearest training photos: chickens at most "
          f"{max(nb for _, _, nb in chickens):.1f}; FMD photos with P(FMD) >= FMD_ALERT: "
          f"{sum(nb > 0.95 for nb in alert)} of {len(alert)} have all ten")
    print("livestock/species chickens and ducks with P(FMD) >= FMD_ALERT whose farm-bird guess "
          "(>= SPECIES_MIN, under SPECIES_PLAUSIBLE, bird mass under BIRD_SEEN) is the best "
          "guess, by their FMD neighbour share (these would get the FMD warning at FMD_LIKE "
          "at or below it):")
    for name in SPECIES_SETS:
        s = load(cache, name)
        shares = Counter()
        for a, y in zip(s["rows"], s["truths"], strict=True):
            if y not in pipeline.BIRDS:
                continue
            m = species_scores(a.imagenet_probs, SPECIES)
            p = dict(zip(a.labels, a.cond_probs, strict=True))[pipeline.FMD]
            k = int(m.argmax())
            if (SPECIES[k] in pipeline.BIRDS and pipeline.SPECIES_MIN <= float(m[k])
                    < pipeline.SPECIES_PLAUSIBLE and p >= pipeline.FMD_ALERT
                    and float(bird_mass(a.imagenet_probs)) < pipeline.BIRD_SEEN):
                shares[round((a.neighbours or {}).get(pipeline.FMD, 0.0), 1)] += 1
        print(f"  {name}: " + ", ".join(f"{k:.1f}: {v}" for k, v in sorted(shares.items())))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default="/work/scratch-vet")
    ap.add_argument("--before", default=None, metavar="REV",
                    help="also replay vet/pipeline.py as committed at this git revision")
    ap.add_argument("--sets", nargs="+", default=[*CONDITION_SETS, *SPECIES_SETS, "pages"],
                    choices=[*CONDITION_SETS, *SPECIES_SETS, "pages"])
    ap.add_argument("--set", nargs="+", default=[], metavar="NAME=VALUE",
                    help="change vet.pipeline constants (today's rules) for a sweep")
    ap.add_argument("--bird-thresholds", action="store_true",
                    help="only how BIRD_SEEN and FMD_LIKE were measured")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.bird_thresholds:
        bird_thresholds(Path(args.cache))
        return 0
    for kv in args.set:
        k, v = kv.split("=")
        old = getattr(pipeline, k)
        setattr(pipeline, k, type(old)(v) if not isinstance(old, bool) else v == "True")
    cache = Path(args.cache)
    sets = {n: (pages_set(cache) if n == "pages" else load(cache, n)) for n in args.sets}
    mods = {"today": pipeline}
    if args.before:
        mods = {"before": rules_at(args.before), "after": pipeline}
    report(mods, sets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
