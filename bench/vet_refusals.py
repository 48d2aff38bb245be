"""Where the answered share is lost: the unanswered photos per reason, and what the model's
top condition would have said.

    python bench/vet_refusals.py [--model vet/model] [--split test|val|measure] [--sweep]
                                 [--rule-off]

For the held-out test groups of the shipped checkpoint (``test_split.csv``; ``--split val``
for the validation groups, ``--split measure`` for the unlicensed field sources of
extra/, de-duplicated against the licensed photos as in ``bench/vet_eval.py``; a healthy
mouth, foot or udder counts as ``healthy``), the photos of the answer classes that do not get status
``ok`` are counted per ``reason_code`` (and ``reason_about``), with how many of them the
model's top condition (forced choice over the answer labels) gets right, and how many the
condition shown with the refusal (a low-confidence hint, an FMD warning) gets right.
Then the same counts per source.

``--sweep`` shows how ``vet.pipeline.CLOSE_UP_NEIGHBOURS`` was chosen: on the licensed
validation photos (answered, wrong) and on the train split of livestock/species (pig,
sheep and goat photos given a cattle-only condition, sure or not), never on the test
groups or the field sources, which ``bench/vet_eval.py`` reports.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import (  # noqa: E402
    HEALTHY_PARTS,
    bench_model,
    held_out_items,
    measure_rows,
    photo_outputs,
    species_photos,
    tally,
)
from vet import pipeline  # noqa: E402
from vet.pipeline import decide  # noqa: E402
from vet.train_data import read_split  # noqa: E402

CATTLE_ONLY = {"healthy", "lumpy_skin", "mastitis", "pinkeye"}
SWEEP = (None, 0.55, 0.75, 0.85, 0.95)  # None: the rule off


def top_label(args: pipeline.DecideArgs) -> str:
    """The model's forced choice over the answer labels."""
    return args.labels[max(range(len(args.labels)), key=args.cond_probs.__getitem__)]


def refusal_table(rows: list, truths: list[str], sources: list[str]) -> dict:
    """Per (status, reason_code, reason_about): refused, top-1 right, shown condition right;
    per source: photos, answered, refused, refused with a right top-1."""
    by_reason: dict = defaultdict(Counter)
    by_source: dict = defaultdict(Counter)
    for a, y, s in zip(rows, truths, sources, strict=True):
        t = decide("x", *a)
        by_source[s]["n"] += 1
        if t.status == "ok":
            by_source[s]["answered"] += 1
            continue
        key = (t.status, t.reason_code, t.reason_about or "-")
        right = top_label(a) == y
        by_reason[key].update(n=1, top1_right=right, shown_right=t.condition == y)
        by_source[s].update(refused=1, top1_right=right)
    return {"reasons": dict(by_reason), "sources": dict(by_source)}


def print_table(tab: dict, n: int) -> None:
    refused = sum(c["n"] for c in tab["reasons"].values())
    print(f"{n} photos, {n - refused} answered ({(n - refused) / max(n, 1):.3f}), "
          f"{refused} not answered")
    print(f"{'status':<14}{'reason_code':<22}{'reason_about':<13}{'n':>5}{'share':>7}"
          f"{'top-1 right':>13}{'shown right':>13}")
    for (status, code, about), c in sorted(tab["reasons"].items(), key=lambda kv: -kv[1]["n"]):
        print(f"{status:<14}{code:<22}{about:<13}{c['n']:>5}{c['n'] / max(n, 1):>7.3f}"
              f"{c['top1_right']:>13}{c['shown_right']:>13}")
    total = Counter()
    for c in tab["reasons"].values():
        total.update(c)
    print(f"{'all':<49}{total['n']:>5}{total['n'] / max(n, 1):>7.3f}{total['top1_right']:>13}"
          f"{total['shown_right']:>13}")
    print("per source: photos, answered, not answered (top-1 right of them)")
    for s, c in sorted(tab["sources"].items()):
        print(f"  {s}: {c['n']}, {c['answered']} ({c['answered'] / max(c['n'], 1):.3f}), "
              f"{c['refused']} ({c['top1_right']})")


def sweep(model, data: Path, src: str, val_rows: list, truths: list[str]) -> None:
    sp_paths, sp_names = species_photos(data, "train")
    sp_rows, _, kept = photo_outputs(model, sp_paths, "species train split")
    sp_names = [sp_names[k] for k in kept]
    shipped = pipeline.CLOSE_UP_NEIGHBOURS
    print("\nCLOSE_UP_NEIGHBOURS | licensed validation answered right-of-answered wrong | "
          "species train pig/sheep/goat given a cattle-only condition (of 500 each)")
    for v in SWEEP:
        pipeline.CLOSE_UP_NEIGHBOURS = 2.0 if v is None else v  # 2.0: never reached
        val = tally([decide("x", *a) for a in val_rows], truths)
        ts = [decide("x", *a) for a in sp_rows]
        bad = {sp: sum(t.condition in CATTLE_ONLY for t, s in zip(ts, sp_names, strict=True)
                       if s == sp) for sp in ("pig", "sheep", "goat")}
        mark = "  <- shipped" if v == shipped else ""
        print(f"{'off' if v is None else v:>19} | {val['answered']:.3f} "
              f"{val['right_of_answered']:.3f} {val['wrong']:.3f} | {bad}{mark}")
    pipeline.CLOSE_UP_NEIGHBOURS = shipped


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--split", choices=("test", "val", "measure"), default="test")
    ap.add_argument("--sweep", action="store_true", help="also the CLOSE_UP_NEIGHBOURS sweep")
    ap.add_argument("--rule-off", action="store_true",
                    help="the table without the neighbour close-up rule (as before it)")
    args = ap.parse_args()
    if args.rule_off:
        pipeline.CLOSE_UP_NEIGHBOURS = 2.0  # never reached
    data, src, model = bench_model(args)
    answer = set(model.config.answer_labels)

    def photos(split: str) -> tuple[list, list[str], list[str]]:
        if split == "measure":
            rows, _ = measure_rows(data, held_out_items(Path(src), data)[0])
            out, _, kept = photo_outputs(model, [data / r["file"] for r in rows], "measure rows")
            labels = [rows[k]["label"] for k in kept]
            return (out, ["healthy" if y in HEALTHY_PARTS else y for y in labels],
                    [f"{rows[k]['source_repo']} | {labels[i]}" for i, k in enumerate(kept)])
        items = [it for it in read_split(Path(src) / f"{split}_split.csv", data / "livestock")
                 if it.label in answer]
        rows, _, kept = photo_outputs(model, [it.path for it in items], f"{split} photos")
        return rows, [items[k].label for k in kept], [items[k].source for k in kept]

    rows, truths, sources = photos(args.split)
    print(f"== {args.split} groups of {src}: the photos not answered, per reason ==")
    print_table(refusal_table(rows, truths, sources), len(rows))
    if args.sweep:
        if args.split != "val":  # the constant is chosen on validation only
            rows, truths, _ = photos("val")
        sweep(model, data, src, rows, truths)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
