"""Fine-tune the condition head: ``python -m vet.train DATA_DIR_OR_CSV -o MODEL_DIR``.

Why it looks like this:

* The photos are Roboflow augmented copies of fewer originals, so every split
  is by source group (a random split leaks copies across it and inflates F1).
  Groups are balanced per class over ``--folds`` folds; one fold is the
  held-out test set, the next one validation (early stopping + temperature).
* Two CPU cores cannot afford full fine-tuning for several epochs, so the early
  blocks stay frozen: their feature maps are computed once (plus a mirrored
  copy as augmentation) and cached in /tmp, and only the blocks from
  ``--branch-from`` onward are trained.
* The shipped checkpoint keeps the original ImageNet tail as a reference branch
  so one forward pass also feeds the not-livestock gate and the species guess.

``DATA_DIR_OR_CSV`` is either a CSV with ``file,label[,source_group]`` columns
(paths relative to the CSV's folder or one of its parents) or a folder with one
sub-folder per class (a ``labels.csv`` inside it is used when present).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from vet.forward import branch_outputs, imagenet_pooled
from vet.imaging import FITS
from vet.labels import SUB, answer_sums, base
from vet.model_card import model_card, print_report
from vet.open_set import (
    _attach_open_set,
    attach_neighbours,
    energy_threshold,
    neighbour_memory,
    neighbour_share,
    neighbour_threshold,
    open_set_stats,
    prototypes,
)
from vet.species import SPECIES, fit_species_head, prior_logits, species_probs
from vet.train_data import (  # noqa: F401 - re-exported: tests and benches import them here
    Item,
    advance,
    assign_folds,
    build_cache,
    collect,
    collect_species,
    drop_rare_classes,
    merge_duplicate_groups,
    parse_clusters,
    species_name,
    split_by_source,
    subclusters,
    write_test_split,
)
from vet.train_metrics import (  # noqa: F401 - re-exported
    answer_predictions,
    answer_targets,
    evaluate_fold,
    macro_f1,
    per_class_report,
)


def class_weights(y: np.ndarray, n: int, power: float) -> torch.Tensor:
    """Inverse-frequency loss weights to the given power (0: none, 1: fully balanced)."""
    counts = np.bincount(y, minlength=n).astype(np.float64)
    return torch.tensor((counts.sum() / np.maximum(counts, 1) / n) ** power).float()


def train_fold(
    cache: dict[str, torch.Tensor],
    y: np.ndarray,
    labels: list[str],
    train_idx: np.ndarray,
    val_idx: np.ndarray,
    branch_from: int,
    epochs: int,
    lr: float,
    seed: int,
    desc: str,
    answer: list[str] | None = None,
    weight_power: float = 0.5,
    shift: int = 0,
):
    """Fine-tune blocks ``branch_from`` on; keep the epoch with the best validation macro-F1.

    The macro-F1 that picks the epoch is over the answer labels, decided among them
    with sub-classes added up: the auxiliary (augmented-only) classes are noisy and
    are never answered, and sub-classes are never shown.
    """
    from vet.convert import vet_model_from_imagenet

    torch.manual_seed(seed)
    model = vet_model_from_imagenet(labels, branch_from)
    model.reference = None  # not needed while training; re-attached when saving
    trainable = [*model.blocks[branch_from:], model.head, model.classifier]
    for p in model.parameters():
        p.requires_grad_(False)
    params = [p for m in trainable for p in m.parameters()]
    for p in params:
        p.requires_grad_(True)
    weights = class_weights(y[train_idx], len(labels), weight_power)
    answer = answer or sorted({base(c) for c in labels})
    vm, yva = answer_targets(y[val_idx], labels, answer)
    opt = torch.optim.AdamW(
        [{"params": list(model.classifier.parameters()), "lr": lr * 3},
         {"params": [p for m in trainable[:-1] for p in m.parameters()], "lr": lr}],
        weight_decay=1e-4,
    )
    bs = 64
    steps = epochs * math.ceil(len(train_idx) / bs)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=[lr * 3, lr], total_steps=steps, pct_start=0.15
    )
    feats = cache["feats"]
    turned = cache.get("turned")
    yt = torch.from_numpy(y)
    best = (-1.0, None, -1)
    rng = np.random.default_rng(seed)
    bar = tqdm(total=steps, desc=desc, unit="step")
    for epoch in range(epochs):
        model.train()
        for m in model.modules():  # frozen BN statistics: batches are small and correlated
            if isinstance(m, torch.nn.BatchNorm2d):
                m.eval()
        order = rng.permutation(train_idx)
        for s in range(0, len(order), bs):
            idx = torch.from_numpy(order[s: s + bs])
            x = feats[idx].float()
            if turned is not None:  # a third of the photos turned either way
                view = torch.from_numpy(rng.integers(0, 3, len(idx)))
                for k in (1, 2):
                    x[view == k] = turned[k - 1][idx[view == k]].float()
            flip = torch.from_numpy(rng.random(len(idx)) < 0.5)
            x[flip] = x[flip].flip(3)
            if shift:
                x = shift_maps(x, shift, rng)
            logits, _ = model.forward_from_block(x, branch_from)
            loss = F.cross_entropy(logits, yt[idx], weight=weights, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if finite_step(loss, params):
                opt.step()
            else:
                bar.write(f"{desc}: a step with non-finite gradients was skipped")
            sched.step()
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
        vlogits = branch_outputs(model, feats, val_idx[vm], branch_from)[0]
        pred = answer_predictions(vlogits, labels, answer)
        score = macro_f1(per_class_report(yva, pred, answer), answer)
        bar.write(f"{desc} epoch {epoch + 1}: val macro-F1 {score:.4f}")
        if score > best[0]:
            best = (score, {k: v.detach().clone() for k, v in model.state_dict().items()}, epoch)
    bar.close()
    model.load_state_dict(best[1])
    model.eval()
    return model, best[0], best[2] + 1


def finite_step(loss: torch.Tensor, params: list[torch.Tensor]) -> bool:
    """Whether a step may be taken: one inf gradient turns AdamW's weights into NaN for good.

    Seen once in CI on the tiny test set (loss finite, next loss NaN, not reproduced).
    """
    return bool(torch.isfinite(loss)) and all(
        bool(torch.isfinite(p.grad).all()) for p in params if p.grad is not None)


def shift_maps(x: torch.Tensor, shift: int, rng: np.random.Generator) -> torch.Tensor:
    """Move each cached feature map by up to ``shift`` cells (edges repeated).

    A cell of the block-11 map is 16 pixels of the photo, so this is a cheap
    stand-in for random crops, which the cache cannot offer.
    """
    h, w = x.shape[-2:]
    padded = F.pad(x, [shift] * 4, mode="replicate")
    offs = rng.integers(0, 2 * shift + 1, size=(len(x), 2))
    return torch.stack([padded[i, :, a: a + h, b: b + w] for i, (a, b) in enumerate(offs)])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m vet.train", description=__doc__.split("\n")[0])
    ap.add_argument("data", nargs="+",
                    help="labels CSV(s) or a folder with one sub-folder per class; rows "
                         "marked use=measure are left out")
    ap.add_argument("-o", "--output", required=True, help="model folder to write")
    ap.add_argument("--folds", type=int, default=5, help="group folds (default 5)")
    ap.add_argument("--test-fold", type=int, default=0)
    ap.add_argument("--cv", action="store_true", help="also cross-validate over all folds")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--branch-from", type=int, default=11, help="first fine-tuned block")
    ap.add_argument("--cache-block", type=int, default=11,
                    help="block whose input is cached (later blocks are derived from it)")
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--augmented-only", choices=("aux", "train", "drop"), default="aux",
                    help="classes whose photos are all augmented copies: train on them but "
                         "never answer them (aux, default), treat them as normal classes "
                         "(train), or leave them out (drop)")
    ap.add_argument("--min-groups", type=int, default=5,
                    help="leave out classes with fewer source groups (default 5; the shipped "
                         "model used 20)")
    ap.add_argument("--ood-dim", type=int, default=64,
                    help="dimensions of the open-set (Mahalanobis) statistics (0 = none)")
    ap.add_argument("--cache-dir", default="/tmp/vet_cache")
    ap.add_argument("--split-by-source", default="",
                    help="comma-separated labels trained as one sub-class per source "
                         "(label~source), added up again in the answer")
    ap.add_argument("--only-source", action="append", default=[],
                    help="train and test only on these sources (repeatable); the folds stay "
                         "those of all the data, for a fair comparison")
    ap.add_argument("--cluster", action="append", default=[], metavar="LABEL:K",
                    help="train LABEL as K sub-classes found by k-means on the training "
                         "photos' ImageNet features (repeatable), added up in the answer")
    ap.add_argument("--class-weight-power", type=float, default=0.5,
                    help="loss weights (1/class frequency)^power (default 0.5)")
    ap.add_argument("--turns", action="store_true",
                    help="augmentation: a training photo is seen turned a quarter either way, "
                         "a third of the time each (their frozen features are cached too)")
    ap.add_argument("--shift", type=int, default=0,
                    help="augmentation: move cached feature maps by up to this many cells")
    ap.add_argument("--knn-dim", type=int, default=128,
                    help="dimensions of the labelled ImageNet-feature memory (0 = none)")
    ap.add_argument("--knn-k", type=int, default=10, help="neighbours it looks at")
    ap.add_argument("--knn-keep", type=float, default=0.97,
                    help="share of right validation answers its threshold keeps")
    ap.add_argument("--energy-keep", type=float, default=0.95,
                    help="share of validation photos the energy threshold keeps (0 = none)")
    ap.add_argument("--dump-folds", default=None,
                    help="write each fold's validation and test logits here (npz)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    ap.add_argument("--fit", choices=("crop", "letterbox"), default="crop",
                    help="how a training photo becomes the square input: the centre square "
                         "(default) or the whole photo letterboxed")
    ap.add_argument("--serve-fit", choices=FITS, default=None,
                    help="how the saved model sees a photo (config.image_fit; default: as "
                         "--fit). The shipped model trains on crops and serves both: the "
                         "centre crop and the whole photo, averaged (issue #62)")
    ap.add_argument("--species", action="append", default=[], metavar="CSV",
                    help="licensed photos labelled by species (file,species,source_group), "
                         "for the species head beside the condition photos (repeatable)")
    ap.add_argument("--species-bound", type=float, default=3.0,
                    help="largest change the species head makes to a species' log-odds")
    return ap.parse_args(argv)


@dataclass
class Data:
    """The photos, their cached features, folds and labels: what every step reads."""

    items: list[Item]
    cache: dict[str, torch.Tensor]
    folds: np.ndarray
    labels: list[str]  # trained classes (sub-classes included)
    answer: list[str]  # classes the model may answer
    core: list[str]
    merged: int
    clusters: dict[str, int]
    unit: torch.Tensor | None  # ImageNet features, only when clustering needs them

    def targets(self, fit_idx: np.ndarray, seed: int) -> np.ndarray:
        """Class indices, clustered labels split by k-means fitted on ``fit_idx`` only."""
        names = [it.label for it in self.items]
        for label, k in self.clusters.items():
            for i, sub in subclusters(names, self.unit, fit_idx, label, k, seed).items():
                names[i] = sub
        return np.array([self.labels.index(n) for n in names])


@dataclass
class Fold:
    """One trained fold: the model, its report and its split."""

    model: Any
    res: dict[str, Any]
    train: np.ndarray
    val: np.ndarray
    test: np.ndarray
    y: np.ndarray


def main(argv: list[str] | None = None) -> int:
    """The plan: data, (cross-validation), the shipped fold, what the triage needs beside
    the classifier, then the model folder with its report and card."""
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    t0 = time.time()
    data = load_data(args)
    cv = [run_fold(args, data, f).res for f in range(args.folds)
          if args.cv and f != args.test_fold]
    fold = run_fold(args, data, args.test_fold)
    if args.cv:
        cv.append(fold.res)
    extras = fit_open_set(args, data, fold)
    species = fit_species(args, data, fold)
    out = Path(args.output)
    save_model(fold.model, data.labels, args.branch_from, fold.res["temperature"], args.size,
               out, *extras["prototypes"], data.answer, extras["ood"], extras["knn"],
               fold.res.get("energy_threshold"), species, args.serve_fit or args.fit)
    write_report(args, data, fold, cv, out, time.time() - t0)
    return 0


def load_data(args: argparse.Namespace) -> Data:
    """Labelled photos (measure-only rows left out), their cached frozen features, folds."""
    items = collect(args.data if len(args.data) > 1 else args.data[0])
    merged = merge_duplicate_groups(items)
    if merged:
        print(f"{merged} photos found in two sources: their source groups were merged",
              file=sys.stderr)
    items = drop_rare_classes(items, args.min_groups)
    if len({it.label for it in items}) < 2:
        raise SystemExit("need at least two classes")
    cache = cached_features(args, items)
    if args.turns:
        cache["turned"] = turned_features(args, items, cache["index"])
    items = [items[i] for i in cache["index"].tolist()]
    # Folds are assigned over every photo first so that the held-out groups are the
    # same whichever classes are trained (the eval and the tests rebuild them).
    folds = assign_folds(items, args.folds, args.seed)
    keep = [i for i, it in enumerate(items) if (it.traceable or args.augmented_only != "drop")
            and (not args.only_source or it.source in args.only_source)]
    if len(keep) < len(items):
        dropped = sorted({it.label for it in items if not it.traceable})
        if args.augmented_only == "drop" and dropped:
            print(f"leaving out augmented-only classes {dropped} (untraceable originals make "
                  "a group split unreliable)", file=sys.stderr)
        idx = torch.tensor(keep)
        cache = {"feats": cache["feats"][idx], "ref_probs": cache["ref_probs"][idx],
                 **({"turned": cache["turned"][:, idx]} if "turned" in cache else {})}
        items, folds = [items[i] for i in keep], folds[keep]
    core = sorted({it.label for it in items if it.traceable}) or sorted({it.label for it in items})
    answer = core if args.augmented_only == "aux" else sorted({it.label for it in items})
    split_by_source(items, [c for c in args.split_by_source.split(",") if c])
    clusters = parse_clusters(args.cluster)
    labels = sorted({it.label for it in items if it.label not in clusters}
                    | {f"{c}{SUB}c{j}" for c, k in clusters.items() for j in range(k)})
    unit = (imagenet_pooled(cache["feats"], np.arange(len(items)), args.branch_from)
            if clusters else None)
    print(f"{len(items)} images, {len({it.group for it in items})} source groups, "
          f"classes {labels}; answered {answer}", file=sys.stderr)
    return Data(items, cache, folds, labels, answer, core, merged, clusters, unit)


def turned_features(args: argparse.Namespace, items: list[Item], index: torch.Tensor
                    ) -> torch.Tensor:
    """``--turns``: the training photos' frozen features turned a quarter left and right,
    stacked (2, N, ...) in the order of the plain cache's ``index``."""
    if args.branch_from > args.cache_block:
        raise SystemExit("--turns caches features at --cache-block: give --branch-from "
                         "no later than it")
    turned = [build_cache(items, args.branch_from, args.size, Path(args.cache_dir),
                          args.fit, turn) for turn in (1, 3)]
    if any(not torch.equal(t["index"], index) for t in turned):
        raise SystemExit("--turns: a photo read once failed another time")
    return torch.stack([t["feats"] for t in turned])


def cached_features(args: argparse.Namespace, items: list[Item]) -> dict[str, torch.Tensor]:
    """Frozen features at ``--branch-from``, built once and kept in ``--cache-dir``."""
    cache = build_cache(items, min(args.cache_block, args.branch_from), args.size,
                        Path(args.cache_dir), args.fit)
    if args.branch_from > args.cache_block:
        adv = Path(args.cache_dir) / (
            f"adv_{hashlib.sha1(str([str(i.path) for i in items]).encode()).hexdigest()[:12]}"
            f"_{args.size}_{args.cache_block}_{args.branch_from}"
            f"{'' if args.fit == 'crop' else '_' + args.fit}.pt")
        if adv.is_file():
            cache["feats"] = torch.load(adv)
        else:
            cache["feats"] = advance(cache["feats"], args.cache_block, args.branch_from)
            torch.save(cache["feats"], adv)
    return cache


def fold_split(folds: np.ndarray, test_fold: int, n_folds: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training, validation (the next fold) and test photo indices."""
    val_fold = (test_fold + 1) % n_folds
    return (np.where((folds != test_fold) & (folds != val_fold))[0],
            np.where(folds == val_fold)[0], np.where(folds == test_fold)[0])


def run_fold(args: argparse.Namespace, data: Data, test_fold: int) -> Fold:
    """Train on the other folds, pick the epoch on validation, report on the test fold."""
    tr, va, te = fold_split(data.folds, test_fold, args.folds)
    y = data.targets(tr, args.seed)
    feats = data.cache["feats"]
    model, val_f1, best_epoch = train_fold(
        data.cache, y, data.labels, tr, va, args.branch_from, args.epochs, args.lr, args.seed,
        f"fold {test_fold}", data.answer, args.class_weight_power, args.shift,
    )
    vlog = branch_outputs(model, feats, va, args.branch_from)[0]
    tlog = branch_outputs(model, feats, te, args.branch_from)[0]
    res = {"test_fold": test_fold, "val_fold": (test_fold + 1) % args.folds,
           "best_epoch": best_epoch, "n_train": len(tr), "n_val": len(va),
           "val_macro_f1": val_f1,
           **evaluate_fold(vlog, y[va], tlog, y[te], data.labels, data.answer,
                           [data.items[i].source for i in te])}
    if args.energy_keep:
        res["energy_threshold"] = energy_threshold(vlog, args.energy_keep)
    print(json.dumps({k: v for k, v in res.items()
                      if not k.startswith(("per_class", "per_source", "all_labels"))}),
          file=sys.stderr)
    if args.dump_folds:
        Path(args.dump_folds).mkdir(parents=True, exist_ok=True)
        np.savez(Path(args.dump_folds) / f"fold{test_fold}.npz", test_idx=te,
                 test_logits=tlog.numpy(), val_idx=va, val_logits=vlog.numpy(),
                 labels=np.array(data.labels), y=y,
                 files=np.array([str(it.path) for it in data.items]),
                 sources=np.array([it.source for it in data.items]))
    return Fold(model, res, tr, va, te, y)


def fit_open_set(args: argparse.Namespace, data: Data, fold: Fold) -> dict[str, Any]:
    """The gate's prototypes, the Mahalanobis statistics and the neighbour memory, each
    with its threshold set on the validation photos (no out-of-distribution photo)."""
    feats, b = data.cache["feats"], args.branch_from
    tr_unit, va_unit = imagenet_pooled(feats, fold.train, b), imagenet_pooled(feats, fold.val, b)
    protos, threshold = prototypes(tr_unit, va_unit, args.seed)
    fold.res["prototype_threshold"] = threshold
    ood = knn = None
    if args.ood_dim:
        ood = open_set_stats(branch_outputs(fold.model, feats, fold.train, b)[1],
                             branch_outputs(fold.model, feats, fold.val, b)[1],
                             fold.y[fold.train], args.ood_dim)
        fold.res["ood_threshold"] = ood["threshold"]
    if args.knn_dim:
        knn = fit_neighbours(fold.model, feats, b, fold.train, fold.val, fold.y, data.labels,
                             data.answer, args.knn_dim, args.knn_k, args.knn_keep,
                             tr_unit, va_unit)
        fold.res["knn_threshold"] = knn["threshold"]
    return {"prototypes": (protos, threshold), "ood": ood, "knn": knn}


def fit_species(args: argparse.Namespace, data: Data, fold: Fold) -> dict[str, Any] | None:
    """The species head (``vet.species``) on licensed photos only: the condition photos of
    the training folds (cattle, the licensed pigs), the ``--species`` photos and the
    labelled rows left out of the condition classes (the licensed goats), split by group
    with the same folds; held-out top-1 per species goes into the report."""
    if not args.species:
        return None
    seen = {str(it.path) for it in data.items}
    more = [it for src in args.species for it in collect_species(src)]
    more += [Item(it.path, species_name(it.species), it.group, True, it.source, it.species)
             for it in collect(args.data if len(args.data) > 1 else args.data[0])
             if str(it.path) not in seen and it.species not in ("cattle", "unknown")]
    cache = cached_features(args, more)
    more = [more[i] for i in cache["index"].tolist()]
    folds = assign_folds(more, args.folds, args.seed)
    tr2, va2, te2 = fold_split(folds, args.test_fold, args.folds)
    feats, b = data.cache["feats"], args.branch_from

    def part(idx: np.ndarray, idx2: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
        x = torch.cat([imagenet_pooled(feats, idx, b), imagenet_pooled(cache["feats"], idx2, b)])
        p = torch.cat([data.cache["ref_probs"][idx].float(), cache["ref_probs"][idx2].float()])
        y = [species_name(data.items[i].species) for i in idx] + [more[i].label for i in idx2]
        return x, p, np.array([SPECIES.index(s) for s in y])

    train = part(fold.train, tr2)
    head = fit_species_head(*train, bound=args.species_bound, seed=args.seed)
    x, p, y = part(np.concatenate([fold.val, fold.test]), np.concatenate([va2, te2]))
    pred = species_probs(p, x, head["weight"], head["bias"], head["trained"],
                         head["bound"]).argmax(-1).numpy()
    base_pred = prior_logits(p).argmax(-1).numpy()
    counts = Counter(SPECIES[k] for k in train[2].tolist())
    fold.res["species_head"] = {
        "bound": args.species_bound, "trained_on": dict(counts),
        "held_out": {SPECIES[k]: {"n": int((y == k).sum()),
                                  "top1": float((pred[y == k] == k).mean()),
                                  "top1_imagenet_only": float((base_pred[y == k] == k).mean())}
                     for k in sorted(set(y.tolist()))}}
    return head


def write_report(args: argparse.Namespace, data: Data, fold: Fold, cv: list[dict],
                 out: Path, seconds: float) -> None:
    """metrics.json, the split files and the model card; the summary on the console."""
    items = data.items
    report = {
        "data": " ".join(map(str, args.data))
        + "".join(f" --species {s}" for s in args.species)
        + ("" if args.fit == "crop" else f" --fit {args.fit}")
        + (f" --serve-fit {args.serve_fit}" if args.serve_fit else ""),
        "labels": data.labels, "core_labels": data.core,
        "duplicate_merges": data.merged,
        "n_by_source": dict(Counter(it.source for it in items)),
        "answer_labels": data.answer, "augmented_only": args.augmented_only,
        "split": f"{args.folds} folds grouped by source_group (Roboflow _aug_N suffix stripped), "
                 f"balanced per class; test fold {args.test_fold}, "
                 f"validation fold {(args.test_fold + 1) % args.folds}",
        "folds": args.folds, "min_groups": args.min_groups,
        "branch_from": args.branch_from, "image_size": args.size,
        "image_fit": args.serve_fit or args.fit, "train_fit": args.fit,
        "species_data": args.species,
        "epochs": args.epochs,
        "lr": args.lr, "seed": args.seed, "shipped": fold.res,
        "cv": [{k: v for k, v in r.items() if k != "all_labels_decision"} for r in cv],
        "cv_macro_f1_mean": float(np.mean([r["test_macro_f1"] for r in cv])) if cv else None,
        "cv_macro_f1_std": float(np.std([r["test_macro_f1"] for r in cv])) if cv else None,
        "test_photos_farm_mass": _gate_stats(data.cache["ref_probs"][fold.test].float()),
        "seconds": round(seconds, 1),
    }
    (out / "metrics.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    write_test_split(out / "test_split.csv", [items[i] for i in fold.test])
    write_test_split(out / "val_split.csv", [items[i] for i in fold.val])
    (out / "README.md").write_text(model_card(report), encoding="utf-8")
    print_report(report)


def _gate_stats(ref_probs: torch.Tensor) -> dict[str, float]:
    from vet.gate import farm_mass

    mass = farm_mass(ref_probs)
    return {f"q{q}": float(np.quantile(mass.numpy(), q / 100)) for q in (1, 5, 10, 25, 50)}


def fit_neighbours(model, feats: torch.Tensor, branch_from: int, train_idx: np.ndarray,
                   val_idx: np.ndarray, y: np.ndarray, labels: list[str], answer: list[str],
                   dim: int, k: int, keep: float, train_unit: torch.Tensor | None = None,
                   val_unit: torch.Tensor | None = None) -> dict:
    """The labelled ImageNet-feature memory and its threshold, set on validation photos.

    The threshold is the largest share of neighbours in the predicted condition
    that still keeps ``keep`` of the validation photos the model gets right.
    """
    if train_unit is None:
        train_unit = imagenet_pooled(feats, train_idx, branch_from)
    if val_unit is None:
        val_unit = imagenet_pooled(feats, val_idx, branch_from)
    memory = neighbour_memory(train_unit, y[train_idx], dim)
    vm, yva = answer_targets(y[val_idx], labels, answer)
    va = val_idx[vm]
    share = neighbour_share(memory, val_unit[torch.from_numpy(vm)], len(labels), k)
    share = answer_sums(share, labels, answer)
    pred = answer_predictions(branch_outputs(model, feats, va, branch_from)[0], labels,
                              answer)
    of_pred = share[torch.arange(len(pred)), torch.from_numpy(pred)]
    return {"memory": memory, "k": k,
            "threshold": neighbour_threshold(of_pred, pred == yva, keep)}


def attach_species_head(model, species: dict) -> None:
    """Put a fitted species head (``vet.species.fit_species_head``) into a model: its config
    and buffers, which ``save_pretrained`` then writes beside the weights."""
    model.config.species_head = len(SPECIES)
    model.config.species_labels = list(SPECIES)
    model.config.species_bound = species["bound"]
    for name in ("weight", "bias", "trained"):
        model.register_buffer(f"species_{name}", species[name].clone().float())


def save_model(model, labels: list[str], branch_from: int, temperature: float, size: int,
               out: Path, protos: torch.Tensor | None = None, threshold: float = 0.0,
               answer: list[str] | None = None, ood: dict | None = None,
               knn: dict | None = None, energy_min: float | None = None,
               species: dict | None = None, fit: str = "crop") -> None:
    """Write the fine-tuned model with the ImageNet reference tail, stored as float16."""
    from vet.convert import vet_model_from_imagenet

    full = vet_model_from_imagenet(labels, branch_from, len(protos) if protos is not None else 0)
    if protos is not None:
        full.prototypes.copy_(protos)
        full.config.prototype_threshold = threshold
    sd = {k: v for k, v in model.state_dict().items() if not k.startswith("reference.")}
    missing = full.load_state_dict(sd, strict=False).missing_keys
    assert all(k.startswith("reference.") or k == "prototypes" for k in missing), missing
    full.config.calibration_temperature = temperature
    full.config.answer_labels = list(answer or labels)
    full.config.image_size = size
    if ood is not None:
        _attach_open_set(full, ood)
    if knn is not None:
        attach_neighbours(full, knn["memory"], knn["k"], knn["threshold"])
    if energy_min is not None:
        full.config.energy_threshold = energy_min
    if species is not None:
        attach_species_head(full, species)
    full.config.image_fit = fit
    full.fold_batchnorm()
    out.mkdir(parents=True, exist_ok=True)
    full.half().save_pretrained(out, safe_serialization=True)
    (out / "preprocessor_config.json").write_text(json.dumps({
        "image_processor_type": "ViTImageProcessor", "do_resize": True,
        "size": {"height": size, "width": size}, "resample": 3, "do_rescale": True,
        "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}, indent=2))


if __name__ == "__main__":
    raise SystemExit(main())
