"""One forward pass per photo set, cached, so species-rule variants replay ``decide`` only.

    python bench/vet_species_cache.py [--model vet/model] [--out /work/scratch-vet]
        [--sets val test licensed species_train species_val measure] [--threads 1]

Each set is saved as ``<out>/<set>.pt``: ``decide``'s arguments per readable photo
(``rows``), the ImageNet pooled features (``pooled``, what the species head reads), the
truth (condition, or species for the species splits), the source and the file. The cache
lives outside the repository (it is derived from the shared data, which is never copied
in). ``licensed`` is what a species head may be fitted on: the training folds of
conditions/ and extra/ ``use=train`` (``val_split.csv`` and ``test_split.csv`` left out)
plus licensed_species/; never the unlicensed livestock/species or ``use=measure`` rows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import (  # noqa: E402
    HEALTHY_PARTS,
    bench_model,
    held_out_items,
    measure_rows,
    photo_outputs,
    species_photos,
)
from vet.species import SPECIES  # noqa: E402
from vet.train_data import collect_species, read_split  # noqa: E402

SETS = ("val", "test", "licensed", "species_train", "species_val", "measure")
SIX = ("chicken", "cow", "duck", "goat", "pig", "sheep")


def split_items(src: Path, data: Path, split: str, answer: set[str]) -> list:
    return [it for it in read_split(src / f"{split}_split.csv", data / "livestock")
            if it.label in answer]


def licensed_items(src: Path, data: Path) -> tuple[list[Path], list[str], list[str]]:
    """Licensed photos outside the held-out splits, labelled by species."""
    from vet.train import collect

    held = {str(it.path) for f in ("test_split.csv", "val_split.csv")
            for it in read_split(src / f, data / "livestock")}
    items = [it for it in collect([data / "livestock/conditions/labels.csv",
                                   data / "livestock/extra/labels.csv"])
             if str(it.path) not in held]
    items += collect_species(data / "livestock/licensed_species/labels.csv")
    names = [{"cattle": "cow"}.get(it.species, it.species) for it in items]
    keep = [i for i, s in enumerate(names) if s in SPECIES]
    return ([items[i].path for i in keep], [names[i] for i in keep],
            [f"{items[i].source}|{items[i].group}" for i in keep])


def set_inputs(name: str, src: Path, data: Path, answer: set[str]
               ) -> tuple[list[Path], list[str], list[str]]:
    """Files, truths and sources of one set."""
    if name in ("val", "test"):
        items = split_items(src, data, name, answer)
        return [it.path for it in items], [it.label for it in items], [it.source for it in items]
    if name == "licensed":
        return licensed_items(src, data)
    if name.startswith("species_"):
        paths, names = species_photos(data, "train" if name == "species_train" else "validation",
                                      SIX)
        return paths, names, ["livestock/species"] * len(paths)
    rows, _ = measure_rows(data, held_out_items(src, data)[0])
    return ([data / r["file"] for r in rows],
            ["healthy" if r["label"] in HEALTHY_PARTS else r["label"] for r in rows],
            [f"{r['source_repo']} | {r['label']}" for r in rows])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--out", default="/work/scratch-vet")
    ap.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    data, src, model = bench_model(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    answer = set(model.config.answer_labels)
    for name in args.sets:
        paths, truths, sources = set_inputs(name, Path(src), data, answer)
        rows, pooled, kept = photo_outputs(model, paths, name)
        torch.save({"rows": rows, "pooled": pooled, "truths": [truths[k] for k in kept],
                    "sources": [sources[k] for k in kept], "files": [str(paths[k]) for k in kept]},
                   out / f"{name}.pt")
        print(f"{name}: {len(rows)} photos -> {out / (name + '.pt')}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
