"""Measure the vet model on real data: port check, species, gate, held-out conditions.

    python bench/vet_eval.py [--model vet/model] [--json out.json]

* Port: how often an ImageNet class that fits the species is in the top-5, on
  the species validation photos (evaluation only: that data has no license).
* Species top-1 from summed ImageNet probability per species (a mapping written
  from class meanings, not fitted on these photos).
* Gate: share of scanned pages and synthetic non-animal images answered
  ``not_livestock``; share of real livestock photos that pass it.
* Conditions: the shipped checkpoint on its held-out test fold, end to end from
  the image files (the same numbers ``vet.train`` reported from its cache).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vet.gate import SPECIES_CLASSES, is_livestock, species_scores  # noqa: E402
from vet.imaging import BadImage, load_image, to_tensor  # noqa: E402
from vet.model_io import load_model, model_source  # noqa: E402
from vet.pipeline import answer_probs  # noqa: E402

SPECIES = ("chicken", "cow", "duck", "goat", "pig", "sheep")
# Classes that count as "fitting" in the top-5 port check; goats also fit the wild
# caprines because ImageNet has no domestic goat.
TOP5_FIT = {**{s: set(SPECIES_CLASSES[s]) for s in SPECIES}, "goat": {348, 349, 350}}


def shared() -> Path:
    return Path(os.environ.get("BORDE_SHARED_DATA") or ROOT.parent / "shared" / "data")


def forward(model, images: list[Image.Image], bs: int = 32):
    cond, ref, sims = [], [], []
    size = int(getattr(model.config, "image_size", 224))
    with torch.inference_mode():
        for s in range(0, len(images), bs):
            out = model(pixel_values=to_tensor(images[s: s + bs], size))
            cond.append(answer_probs(model.config, out.logits)[1])
            ref.append(out.reference_logits.softmax(-1))
            if out.prototype_similarity is not None:
                sims.append(out.prototype_similarity)
    thr = getattr(model.config, "prototype_threshold", None)
    sim = torch.cat(sims) if sims else torch.full((sum(len(c) for c in cond),), float("nan"))
    gate = [is_livestock(r, None if torch.isnan(s) else float(s), thr)
            for r, s in zip(torch.cat(ref), sim, strict=True)]
    return torch.cat(cond), torch.cat(ref), gate


def load_all(paths: list[Path], desc: str) -> tuple[list[Image.Image], list[Path]]:
    imgs, kept = [], []
    for p in tqdm(paths, desc=desc, unit="img"):
        try:
            imgs.append(load_image(p, draft=448))
            kept.append(p)
        except BadImage as exc:
            print(f"skip {p}: {exc}", file=sys.stderr)
    return imgs, kept


def synthetic_images(n: int = 60, seed: int = 0) -> list[Image.Image]:
    """Non-animal images: noise, flat colours, gradients, shapes, text, stripes."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            arr = rng.integers(0, 256, (256, 256, 3), dtype=np.uint8)
            out.append(Image.fromarray(arr))
        elif kind == 1:
            out.append(Image.new("RGB", (300, 200), tuple(int(v) for v in rng.integers(0, 256, 3))))
        elif kind == 2:
            g = np.linspace(0, 255, 256, dtype=np.uint8)
            arr = np.stack([np.tile(g, (256, 1)), np.tile(g[:, None], (1, 256)),
                            np.full((256, 256), int(rng.integers(0, 256)), np.uint8)], -1)
            out.append(Image.fromarray(arr))
        elif kind == 3:
            img = Image.new("RGB", (320, 240), "white")
            d = ImageDraw.Draw(img)
            for _ in range(8):
                x0, y0 = rng.integers(0, 280), rng.integers(0, 200)
                d.rectangle([x0, y0, x0 + rng.integers(10, 80), y0 + rng.integers(10, 80)],
                            fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
            out.append(img)
        elif kind == 4:
            img = Image.new("RGB", (400, 300), "white")
            d = ImageDraw.Draw(img)
            for row in range(14):
                d.text((10, 10 + row * 20), "Invoice 2024 total 1,250.00 EUR paid " * 2,
                       fill="black")
            out.append(img)
        else:
            arr = np.zeros((240, 240, 3), np.uint8)
            arr[:, ::16] = 255
            arr[::24] = (200, 30, 30)
            out.append(Image.fromarray(arr))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--json", default=None, help="also write the numbers here")
    ap.add_argument("--limit", type=int, default=0, help="photos per species (0 = all)")
    args = ap.parse_args()
    data = shared()
    if not data.is_dir():
        print(f"shared data not found at {data}; set BORDE_SHARED_DATA", file=sys.stderr)
        return 2
    model = load_model(model_source(args.model))
    report: dict = {"model": model_source(args.model)}

    # --- species: port top-5, species top-1, gate pass rate
    top5, top1, passed, n_total = {}, {}, 0, 0
    for sp in SPECIES:
        paths = sorted((data / "livestock/species/validation" / sp).glob("*"))
        if args.limit:
            paths = paths[: args.limit]
        imgs, _ = load_all(paths, f"species {sp}")
        _, ref, gate = forward(model, imgs)
        t5 = ref.topk(5, -1).indices
        top5[sp] = float(np.mean([bool(set(r.tolist()) & TOP5_FIT[sp]) for r in t5]))
        pred = species_scores(ref, SPECIES).argmax(-1)
        top1[sp] = float((pred == SPECIES.index(sp)).float().mean())
        passed += sum(gate)
        n_total += len(imgs)
    report["port_top5_fit"] = top5
    report["port_top5_fit_overall"] = float(np.mean(list(top5.values())))
    report["species_top1"] = top1
    report["species_top1_overall"] = float(np.mean(list(top1.values())))
    report["gate_pass_species_photos"] = passed / max(n_total, 1)

    # --- gate on documents and synthetic images
    pages = sorted(p for p in (data / "pages").rglob("*") if p.suffix.lower() in
                   (".jpg", ".jpeg", ".png"))
    imgs, kept_pages = load_all(pages, "scanned pages")
    _, ref, gate = forward(model, imgs, bs=16)
    rejected = [not g for g in gate]
    from vet.gate import farm_mass

    report["pages_n"] = len(imgs)
    report["pages_not_livestock"] = float(np.mean(rejected))
    report["pages_passed_files"] = [str(p) for p, r in zip(kept_pages, rejected, strict=True)
                                    if not r]
    report["pages_max_farm_mass"] = float(farm_mass(ref).max())
    syn = synthetic_images()
    _, ref, gate = forward(model, syn)
    report["synthetic_n"] = len(syn)
    report["synthetic_not_livestock"] = float(np.mean([not g for g in gate]))

    # --- conditions: held-out test fold, end to end from files
    metrics_path = Path(model_source(args.model)) / "metrics.json"
    if metrics_path.is_file():
        from vet.train import assign_folds, collect, macro_f1, per_class_report

        m = json.loads(metrics_path.read_text())
        items = collect(data / "livestock/conditions/labels.csv")
        folds = assign_folds(items, m.get("folds", 5), m.get("seed", 0))
        test = [it for it, f in zip(items, folds, strict=True)
                if f == m["shipped"]["test_fold"] and it.label in m["answer_labels"]]
        imgs, kept = load_all([it.path for it in test], "held-out condition photos")
        cond, ref, gate = forward(model, imgs)
        labels = list(m["answer_labels"])
        y = np.array([labels.index(it.label) for it in test])
        rep = per_class_report(y, cond.argmax(-1).numpy(), labels)
        report["conditions_per_class"] = rep
        report["conditions_macro_f1"] = macro_f1(rep, labels)
        report["gate_pass_condition_photos"] = float(np.mean(gate))
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
