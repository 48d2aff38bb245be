"""Pick the triage's confidence threshold on the licensed validation photos only.

    python bench/vet_thresholds.py [--model vet/model] [--keep 0.95]

The model folder's ``val_split.csv`` (written by ``python -m vet.train``) lists
the validation photos: licensed, never trained on, and never the held-out test
photos. For each candidate ``min_confidence`` the whole triage runs (gate,
species scope, FMD alert, open set, neighbour check) and the share of photos
answered right and wrong is printed; the rule picks the lowest threshold at
which ``--keep`` of the answers given are right. No ``use=measure`` photo is
read, so the threshold is not tuned on what it is measured on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import vet.pipeline as pipeline  # noqa: E402
from bench.vet_eval import load_all, outcome, shared  # noqa: E402
from vet.imaging import to_tensor, view_counts  # noqa: E402
from vet.model_io import load_model, model_source  # noqa: E402
from vet.train_data import read_split  # noqa: E402

GRID = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9)


def decide_inputs(model, images: list, bs: int = 32) -> list[tuple]:
    """Per photo, the arguments of ``pipeline.decide`` after the model ran once."""
    size = int(getattr(model.config, "image_size", 224))
    rows = []
    with torch.inference_mode():
        for s in range(0, len(images), bs):
            chunk = images[s: s + bs]
            fit = getattr(model.config, "image_fit", "crop")
            o = pipeline.per_photo(model(pixel_values=to_tensor(chunk, size, fit)),
                                   view_counts(chunk, fit))
            rows += [(str(s + j), *a) for j, a in enumerate(pipeline.decide_args(model.config, o))]
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--keep", type=float, default=0.95,
                    help="share of the answers given that must be right (default 0.95)")
    args = ap.parse_args()
    src = Path(model_source(args.model))
    split = src / "val_split.csv"
    if not split.is_file():
        print(f"{split} not found: retrain with python -m vet.train", file=sys.stderr)
        return 2
    model = load_model(str(src))
    data = shared()
    items = [it for it in read_split(split, data / "livestock")
             if it.label in model.config.answer_labels]
    images, kept = load_all([it.path for it in items], "validation photos")
    truths = [items[k].label for k in kept]
    inputs = decide_inputs(model, images)
    picked = None
    print(f"{'min conf':>8s} {'answered':>9s} {'right':>7s} {'wrong':>7s} {'precision':>9s}")
    for thr in GRID:
        outs = [outcome(pipeline.decide(*a, min_confidence=thr), y)
                for a, y in zip(inputs, truths, strict=True)]
        right, wrong = np.mean([o == "right" for o in outs]), np.mean([o == "wrong" for o in outs])
        precision = right / max(right + wrong, 1e-9)
        if picked is None and precision >= args.keep:
            picked = thr
        print(f"{thr:8.2f} {right + wrong:9.3f} {right:7.3f} {wrong:7.3f} {precision:9.3f}")
    print(f"{len(truths)} validation photos; lowest threshold with >= {args.keep:.0%} of the "
          f"answers right: {picked}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
