"""Whole-photo fits and the species head, compared on cached outputs (bench/vet_views.py).

    python bench/vet_fit_compare.py [--model vet/model] [--views /tmp/vet_views]

Per fit (crop, letterbox, crops): the triage on the held-out test groups and on
the unlicensed ``use=measure`` rows (answered share, right share of answers,
confidently wrong), species top-1 on the unlicensed species validation photos
(six species), with ImageNet's species alone and with a species head fitted
here on licensed photos only (cattle training groups, sheep faces and chickens
by group, the licensed pig and goat rows).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import outcome  # noqa: E402
from vet.modeling_efficientnet_lite import EfficientNetLiteConfig  # noqa: E402
from vet.pipeline import decide, decide_args  # noqa: E402
from vet.species import SPECIES, fit_species_head, species_probs  # noqa: E402

SIX = ("chicken", "cow", "duck", "goat", "pig", "sheep")


def load(views: Path, name: str, fit: str) -> dict | None:
    p = views / f"{name}_{fit}.pt"
    return torch.load(p) if p.is_file() else None


def outputs(d: dict, head: dict | str | None) -> SimpleNamespace:
    ref = d["reference_logits"].float()
    sp = None
    if head == "model":  # the species head the model itself ships
        sp = d["species_probs"].float()
    elif head is not None:
        sp = species_probs(ref.softmax(-1), d["reference_pooled"], head["weight"], head["bias"],
                           head["trained"], head["bound"])
    return SimpleNamespace(logits=d["logits"].float(), reference_logits=ref,
                           prototype_similarity=d["prototype_similarity"].float(),
                           ood_distance=d["ood_distance"].float(),
                           neighbour_share=d["neighbour_share"].float(), species_probs=sp)


def triages(cfg, d: dict, head: dict | None, min_conf: float | None = None) -> list:
    out = outputs(d, head)
    kw = {} if min_conf is None else {"min_confidence": min_conf}
    return [decide(f, *a, **kw) for f, a in zip(d["files"], decide_args(cfg, out), strict=True)]


def tally(ts: list, truths: list[str]) -> dict:
    c = Counter(outcome(t, y) for t, y in zip(ts, truths, strict=True))
    n = max(len(ts), 1)
    answered = c["right"] + c["wrong"]
    return {"n": len(ts), "answered": round(answered / n, 3),
            "right_of_answered": round(c["right"] / max(answered, 1), 3),
            "right": round(c["right"] / n, 3), "wrong": round(c["wrong"] / n, 3),
            "species_refusals": round(sum(t.reason_code in ("species_unclear", "species_doubt",
                                                            "species_not_screened")
                                          for t in ts) / n, 3)}


def species_top1(cfg, d: dict, head: dict | None) -> dict:
    from vet.pipeline import species_evidence

    mass = torch.stack([species_evidence(a) for a in decide_args(cfg, outputs(d, head))])
    six = mass[:, [SPECIES.index(s) for s in SIX]]
    pred = [SIX[k] for k in six.argmax(-1).tolist()]
    res = {s: round(float(np.mean([p == s for p, y in zip(pred, d["labels"], strict=True)
                                   if y == s])), 3) for s in SIX}
    res["mean"] = round(float(np.mean([res[s] for s in SIX])), 3)
    return res


def licensed_training(views: Path, fit: str, val_share: float = 0.2
                      ) -> tuple[torch.Tensor, torch.Tensor, np.ndarray, dict]:
    """Features, ImageNet probs and species of the licensed photos; groups split 80/20."""
    xs, ps, ys, held = [], [], [], {"x": [], "p": [], "y": []}
    rng = np.random.default_rng(0)
    for name in ("train_cattle", "licensed_species", "train_other"):
        d = load(views, name, fit)
        if d is None:
            continue
        sp = [lab.split("|")[0].replace("cattle", "cow") for lab in d["labels"]]
        groups = [lab.split("|", 1)[1] for lab in d["labels"]]
        out_g = {g for g in set(groups) if rng.random() < val_share}
        for i, (s, g) in enumerate(zip(sp, groups, strict=True)):
            dst = (held["x"], held["p"], held["y"]) if g in out_g else (xs, ps, ys)
            dst[0].append(d["reference_pooled"][i].float())
            dst[1].append(d["reference_logits"][i].float().softmax(-1))
            dst[2].append(SPECIES.index(s))
    return (torch.stack(xs), torch.stack(ps), np.array(ys),
            {"x": torch.stack(held["x"]), "p": torch.stack(held["p"]), "y": np.array(held["y"])})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=str(ROOT / "vet" / "model"))
    ap.add_argument("--views", default="/tmp/vet_views")
    ap.add_argument("--fits", default="crop,letterbox,crops")
    ap.add_argument("--bound", type=float, default=3.0)
    ap.add_argument("--model-head", action="store_true",
                    help="use the model's own species head (views cached from that model)")
    args = ap.parse_args()
    cfg = EfficientNetLiteConfig.from_pretrained(args.model)
    views = Path(args.views)
    for fit in args.fits.split(","):
        head = None
        tr_fit = "letterbox" if fit == "letterbox" else "crop"
        if args.model_head:
            head = "model"
        elif load(views, "licensed_species", tr_fit) is not None:
            x, p, y, held = licensed_training(views, tr_fit)
            head = fit_species_head(x, p, y, bound=args.bound)
            hp = species_probs(held["p"], held["x"], head["weight"], head["bias"],
                               head["trained"], head["bound"]).argmax(-1).numpy()
            acc = {SPECIES[k]: f"{(hp[m] == k).mean():.3f} (n={m.sum()})"
                   for k in sorted(set(held["y"].tolist())) for m in [held["y"] == k]}
            print(f"[{fit}] species head trained on {Counter(SPECIES[k] for k in y)}; held-out "
                  f"licensed groups top-1: {acc}")
        for name in ("test", "measure"):
            d = load(views, name, fit)
            if d is None:
                continue
            if name == "test":  # the answer classes only (the auxiliary ones are never named)
                keep = [i for i, lab in enumerate(d["labels"]) if lab in cfg.answer_labels]
                d = {k: (v[keep] if isinstance(v, torch.Tensor) else [v[i] for i in keep])
                     for k, v in d.items()}
            truths = [lab.split("|")[0] for lab in d["labels"]]
            for tag, h in (("imagenet species", None), ("species head", head)):
                if tag == "species head" and h is None:
                    continue
                print(f"[{fit}] {name} ({tag}): {tally(triages(cfg, d, h), truths)}")
        d = load(views, "species_val", fit)
        if d is not None:
            print(f"[{fit}] species top-1 (imagenet): {species_top1(cfg, d, None)}")
            if head is not None:
                print(f"[{fit}] species top-1 (head): {species_top1(cfg, d, head)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
