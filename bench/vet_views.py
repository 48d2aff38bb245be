"""Cache one model's outputs per photo under each whole-photo fit (crop, letterbox, crops).

    python bench/vet_views.py [--model vet/model] [--sets test,measure,...] [--fits ...]

Writes ``/tmp/vet_views/<set>_<fit>.pt`` (never into the repository): per photo the
condition and ImageNet logits, the ImageNet pooled features and the open-set scores,
averaged over a photo's views. ``bench/vet_fit_compare.py`` reads them.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
from pathlib import Path

import torch
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vet.imaging import BadImage, load_image, to_tensor, view_counts  # noqa: E402
from vet.model_io import load_model, model_source  # noqa: E402

FIELDS = ("logits", "reference_logits", "reference_pooled", "prototype_similarity",
          "ood_distance", "neighbour_share", "species_probs")


def shared() -> Path:
    return Path(os.environ.get("BORDE_SHARED_DATA") or ROOT.parent / "shared" / "data")


def photo_sets(model_dir: Path, data: Path, n_cattle: int) -> dict[str, list[tuple[str, str]]]:
    """(file, label) per set; labels are conditions or species."""
    from vet.train_data import collect, read_split

    live = data / "livestock"
    test = read_split(model_dir / "test_split.csv", live)
    val = read_split(model_dir / "val_split.csv", live)
    held = {str(it.path) for it in test + val}
    lic = collect([live / "conditions/labels.csv", live / "extra/labels.csv"])
    cattle = [it for it in lic if str(it.path) not in held and it.species == "cattle"]
    random.Random(0).shuffle(cattle)
    sets = {
        "test": [(str(it.path), it.label) for it in test],
        "val": [(str(it.path), it.label) for it in val],
        "measure": [(str(data / r["file"]), f"{r['label']}|{r['species']}|{r['source_repo']}")
                    for r in csv.DictReader((live / "extra/labels.csv").open())
                    if r["use"] == "measure"],
        "species_val": [(str(p), sp) for sp in ("chicken", "cow", "duck", "goat", "pig", "sheep")
                        for p in sorted((live / "species/validation" / sp).glob("*"))],
        "licensed_species": [(str(data / r["file"]), f"{r['species']}|{r['source_group']}")
                             for r in csv.DictReader((live / "licensed_species/labels.csv")
                                                     .open())],
        "train_other": [(str(it.path), f"{it.species}|{it.group}") for it in lic
                        if str(it.path) not in held and it.species in ("pig", "goat")],
        "train_cattle": [(str(it.path), f"cattle|{it.group}") for it in cattle[:n_cattle]],
    }
    return sets


def run_set(model, rows: list[tuple[str, str]], fit: str, bs: int = 32) -> dict:
    size = int(getattr(model.config, "image_size", 224))
    out: dict[str, list[torch.Tensor]] = {k: [] for k in FIELDS}
    kept = []
    batch = []

    def flush() -> None:
        if not batch:
            return
        imgs = [im for _, im in batch]
        with torch.inference_mode():
            o = model(pixel_values=to_tensor(imgs, size, fit))
        counts = view_counts(imgs, fit)
        for k in FIELDS:
            v = getattr(o, k)
            if v is None:
                continue
            parts = torch.split(v.float(), counts)
            out[k].append(torch.stack([p.mean(0) for p in parts]))
        kept.extend(i for i, _ in batch)
        batch.clear()

    for i, (f, _) in enumerate(tqdm(rows, desc=fit, unit="img", mininterval=10)):
        try:
            batch.append((i, load_image(f, draft=448)))
        except BadImage as exc:
            print(f"skip {f}: {exc}", file=sys.stderr)
        if len(batch) == bs:
            flush()
    flush()
    res = {k: torch.cat(v).half() for k, v in out.items() if v}
    res["files"] = [rows[i][0] for i in kept]
    res["labels"] = [rows[i][1] for i in kept]
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--sets", default="test,val,measure,species_val,licensed_species,"
                                      "train_other,train_cattle")
    ap.add_argument("--fits", default="crop,letterbox")
    ap.add_argument("--n-cattle", type=int, default=800)
    ap.add_argument("--out", default="/tmp/vet_views")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    src = model_source(args.model)
    model = load_model(src)
    sets = photo_sets(Path(src), shared(), args.n_cattle)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in args.sets.split(","):
        for fit in args.fits.split(","):
            path = out / f"{name}_{fit}.pt"
            if path.is_file():
                continue
            print(f"{name} ({len(sets[name])} photos), {fit}", file=sys.stderr)
            torch.save(run_set(model, sets[name], fit), path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
