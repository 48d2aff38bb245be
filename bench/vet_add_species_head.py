"""Add a species head to an existing model folder, the condition head untouched.

    python bench/vet_add_species_head.py [--model vet/model] [--out FOLDER] [--bound 3]
        [--balance 1] [--untrained goat pig] [--threads 1]

The head (``vet.species.fit_species_head``) is fitted on the folder's own ImageNet features
of licensed photos only: the training folds of conditions/ and extra/ ``use=train`` (the
photos of the folder's ``val_split.csv`` and ``test_split.csv`` left out) and
licensed_species/; never the unlicensed livestock/species or ``use=measure`` rows.
``--untrained`` species (default goats and pigs, a dozen licensed photos each, the setting
chosen by ``bench/vet_species_rules.py``) keep ImageNet's own probability, as ducks, horses
and camelids do. It is written through the trainer's
``attach_species_head`` and ``save_pretrained`` (float16, as the rest); every other tensor
is checked to come back unchanged.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import bench_model, photo_outputs  # noqa: E402
from bench.vet_species_cache import licensed_items  # noqa: E402
from vet.species import SPECIES, fit_species_head  # noqa: E402
from vet.train import attach_species_head  # noqa: E402

WEIGHTS = "model.safetensors"


def fit(model, src: Path, data: Path, bound: float, balance: float,
        untrained: list[str]) -> tuple[dict, dict]:
    """The head and what it was fitted on (photos per species)."""
    paths, names, _ = licensed_items(src, data)
    keep = [i for i, s in enumerate(names) if s not in untrained]
    rows, pooled, kept = photo_outputs(model, [paths[i] for i in keep], "licensed photos")
    y = np.array([SPECIES.index(names[keep[k]]) for k in kept])
    ref = torch.stack([r.imagenet_probs.float() for r in rows])
    counts = {SPECIES[k]: int((y == k).sum()) for k in sorted(set(y.tolist()))}
    return fit_species_head(pooled, ref, y, bound=bound, balance=balance), counts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--out", default=None, help="another folder (default: the model's own)")
    ap.add_argument("--bound", type=float, default=3.0)
    ap.add_argument("--balance", type=float, default=1.0)
    ap.add_argument("--untrained", nargs="*", default=["goat", "pig"])
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    data, src, model = bench_model(args)
    src = Path(src)
    out = Path(args.out or src)
    if out != src:
        shutil.copytree(src, out, dirs_exist_ok=True)
    before = load_file(src / WEIGHTS)
    head, counts = fit(model, src, data, args.bound, args.balance, args.untrained)
    attach_species_head(model, head)
    model.half().save_pretrained(out, safe_serialization=True)
    after = load_file(out / WEIGHTS)
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert not changed, changed
    metrics = out / "metrics.json"
    if metrics.is_file():
        m = json.loads(metrics.read_text())
        m["species_head_added"] = {"bound": args.bound, "balance": args.balance,
                                   "trained_on": counts,
                                   "trained": [s for s, t in zip(SPECIES, head["trained"].tolist(),
                                                                 strict=True) if t],
                                   "command": "python bench/vet_add_species_head.py"
                                   + f" --bound {args.bound:g} --balance {args.balance:g}"
                                   + " --untrained " + " ".join(args.untrained)}
        metrics.write_text(json.dumps(m, indent=2), encoding="utf-8")
    print(f"species head (bound {args.bound:g}, trained on {counts}) -> {out}; "
          f"{len(before)} tensors unchanged, {len(after) - len(before)} added")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
