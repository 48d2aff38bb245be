"""Training data for the condition model: labelled photos, group folds, cached features.

The photos are Roboflow augmented copies of fewer originals, scraped from the
web by several repositories, so everything here is about keeping one original
on one side of a split: groups rebuilt from ``_aug_N`` names, photos shared by
two sources merged into one group, folds balanced per class by group.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from vet.imaging import BadImage, load_image, normalize, views
from vet.labels import SUB, base

IMAGE_EXTS = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".tif", ".tiff"}


@dataclass
class Item:
    path: Path
    label: str
    group: str
    traceable: bool = True  # False for classes that exist only as augmented copies
    source: str = ""
    species: str = "cattle"


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


def collect_species(source: str | Path) -> list[Item]:
    """Licensed photos labelled by species only (``file,species,source_group,...``), for
    the species head; ``use=measure`` rows are left out as in :func:`collect`."""
    source = Path(source)
    if source.is_dir():
        source = source / "labels.csv"
    with source.open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("use", "train") == "train"]
    return [Item(_resolve(source.parent, r["file"]), species_name(r["species"]),
                 f"{r.get('source_repo', '')}:{r.get('source_group') or r['file']}", True,
                 r.get("source_repo", "") or source.parent.name, r["species"]) for r in rows]


def species_name(tag: str) -> str:
    """A data set's species tag as the species head names it ("cattle" -> "cow")."""
    return {"cattle": "cow", "cows": "cow", "chickens": "chicken"}.get(tag, tag)


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


def split_by_source(items: list[Item], labels: list[str]) -> None:
    """Train each listed label as one sub-class per source (``label~source``).

    The largest source keeps the plain name. Called after the folds are
    assigned, so the split is the same with and without sub-classes.
    """
    for label in labels:
        sizes = Counter(it.source for it in items if it.label == label)
        if len(sizes) < 2:
            continue
        main_source = sizes.most_common(1)[0][0]
        for it in items:
            if it.label == label and it.source != main_source:
                it.label = f"{label}{SUB}{it.source.split('/')[0]}"


def parse_clusters(specs: list[str]) -> dict[str, int]:
    """``["healthy:4"]`` -> ``{"healthy": 4}``."""
    out = {}
    for spec in specs:
        label, _, k = spec.rpartition(":")
        if not label or not k.isdigit() or int(k) < 2:
            raise SystemExit(f"--cluster wants LABEL:K with K >= 2, got {spec!r}")
        out[label] = int(k)
    return out


def subclusters(names: list[str], unit: torch.Tensor, fit_idx: np.ndarray, label: str,
                k: int, seed: int = 0, iters: int = 30) -> dict[int, str]:
    """Sub-class names for every photo of ``label``, by cosine k-means on ``fit_idx``'s photos.

    A class such as "healthy" mixes eye, udder and whole-animal photos; as one
    class its boundary with pinkeye or mastitis has to bend around all three.
    Only the training photos place the centres; every photo of the label is then
    given its nearest centre.
    """
    members = np.array([i for i, n in enumerate(names) if n == label])
    fit = np.array([i for i in fit_idx if names[i] == label])
    if len(fit) < k:
        raise SystemExit(f"--cluster {label}:{k}: only {len(fit)} training photos")
    z = unit[torch.from_numpy(fit)].float()
    gen = torch.Generator().manual_seed(seed)
    centres = z[torch.randperm(len(z), generator=gen)[:k]].clone()
    for _ in range(iters):
        assign = (z @ centres.T).argmax(1)
        centres = torch.stack([z[assign == j].mean(0) if bool((assign == j).any()) else centres[j]
                               for j in range(k)])
        centres = torch.nn.functional.normalize(centres, dim=-1)
    near = (unit[torch.from_numpy(members)].float() @ centres.T).argmax(1).tolist()
    return {int(i): f"{label}{SUB}c{j}" for i, j in zip(members, near, strict=True)}


def build_cache(
    items: list[Item], branch_from: int, size: int, cache_dir: Path, fit: str = "crop",
    turn: int = 0,
) -> dict[str, torch.Tensor]:
    """Frozen early-block features and ImageNet probabilities, cached.

    Only the plain view is cached; mirroring is applied to the cached feature
    map during training, which is close to (not exactly) the features of a
    mirrored photo and costs nothing. ``fit`` is how the photo becomes the
    square input (``vet.imaging.views``), as the shipped model will see it. ``turn``
    quarter turns (counter-clockwise) make the photo turned, as a close-up may be taken:
    unlike a mirror, a turn cannot be made on the feature map.
    """
    from vet.convert import imagenet_model

    if fit not in ("crop", "letterbox"):
        raise SystemExit(f"--fit {fit}: training takes one view per photo (crop or letterbox)")
    key = hashlib.sha1(
        json.dumps([[str(i.path) for i in items], branch_from, size, "v2", _pixel_code()]
                   + ([fit] if fit != "crop" else []) + ([f"turn{turn}"] if turn else [])
                   ).encode()
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

    desc = "caching frozen features" + (f" (turned {90 * turn} deg)" if turn else "")
    for i, it in enumerate(tqdm(items, desc=desc, unit="img")):
        try:
            img = views(_turned(load_image(it.path), turn), size, fit)[0]
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


def _pixel_code() -> str:
    """What makes a photo's pixels besides the file: vet/imaging.py, Pillow and torch.

    A cache made by other code is another cache. Earlier runs that reused an older cache
    did not reproduce the shipped checkpoint; a fresh cache does, byte for byte
    (vet/model/README.md)."""
    import PIL

    import vet.imaging

    code = hashlib.sha1(Path(vet.imaging.__file__).read_bytes()).hexdigest()[:12]
    return f"{code}-{PIL.__version__}-{torch.__version__}"


def _turned(img, turn: int):
    """The photo turned ``turn`` quarter turns counter-clockwise."""
    from PIL import Image

    steps = (None, Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_180,
             Image.Transpose.ROTATE_270)
    return img if turn % 4 == 0 else img.transpose(steps[turn % 4])


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


def write_test_split(path: Path, items: list[Item]) -> None:
    """The held-out test photos, so tests and benches reuse them without re-splitting.

    Paths are relative to the folder that holds every data source (for the shared
    data: ``livestock/``).
    """

    common = Path(os.path.commonpath([str(it.path.parent) for it in items])) if items else Path()
    if common.name not in ("", "livestock") and common.parent.name == "livestock":
        common = common.parent
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "label", "source", "group"])
        for it in items:
            w.writerow([it.path.relative_to(common).as_posix(), base(it.label), it.source,
                        it.group])


def read_split(path: Path, root: Path) -> list[Item]:
    """The photos ``write_test_split`` listed, under ``root`` (for the shared data, its
    ``livestock/`` folder): the one reader of the split files."""
    with path.open(newline="", encoding="utf-8") as fh:
        return [Item(root / r["file"], r["label"], r["group"], True, r["source"])
                for r in csv.DictReader(fh)]
