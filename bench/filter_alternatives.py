"""Measure the strongest page-filter alternative: layout features plus CNN features.

Run from the repo root:  python bench/filter_alternatives.py --size 256x320 --pca 8

Why this exists: the shipped filter (bench/fit_filter.py) misses the issue #3 target on the
ufal pages, and this is the best alternative found, kept runnable so that the numbers in
fit_filter's docstring can be re-printed. It uses the same nested leave-one-document-out
CV as fit_filter. The CNN is EfficientNet-Lite0: the shipped Vet Scanner model
(`--trunk vet`) or the plain ImageNet weights from pip (`--trunk imagenet`). Its pooled
features are reduced by a PCA fitted label-free on all pages, which is slightly
optimistic. Nothing here is shipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import fit_filter as ff  # noqa: E402


def cnn_features(
    root: Path, rows: list[dict[str, str]], size: tuple[int, int], trunk: str
) -> tuple[np.ndarray, float]:
    """Pooled CNN features of each page at `size`; also the one-core ms per page."""
    import torch

    from vet.convert import imagenet_model
    from vet.imaging import normalize
    from vet.model_io import load_model

    torch.set_num_threads(1)
    # "vet": the shipped Vet Scanner model, whose blocks 11-15 were fine-tuned on cattle
    model = imagenet_model() if trunk == "imagenet" else load_model(str(ROOT / "vet" / "model"))
    feats, spent = [], 0.0
    for r in tqdm(rows, desc=f"CNN {size[0]}x{size[1]}"):
        img = ff.load_page(root / r["file"]).convert("RGB")
        t0 = time.perf_counter()
        px = torch.from_numpy(np.array(img.resize(size))).permute(2, 0, 1)[None]
        with torch.inference_mode():
            feats.append(model(normalize(px)).pooled[0].numpy())
        spent += time.perf_counter() - t0
    return np.vstack(feats), 1000 * spent / len(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="256x320", help="CNN input WxH")
    ap.add_argument("--pca", type=int, default=8, help="principal components kept")
    ap.add_argument("--trunk", choices=("vet", "imagenet"), default="vet")
    args = ap.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))

    root = ff.data_dir()
    rows = ff.read_labels(root)
    y = np.array([r["label"] == "illustration" for r in rows], dtype=float)
    groups = np.array([ff.group_of(r["file"]) for r in rows])
    src = np.array([ff.source_of(r["file"]) for r in rows])

    layout, _ = ff.compute_features(root, rows)
    cnn, ms = cnn_features(root, rows, size, args.trunk)
    centred = cnn - cnn.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    x = np.hstack([layout, centred @ vt[: args.pca].T])

    for name, feats in (("39 layout features", layout), (f"+ CNN PCA {args.pca}", x)):
        prob, thr = ff.nested_cv(feats, y, groups)
        m = ff.metrics(prob >= thr, y, src)
        pos, neg = prob[y > 0], prob[y == 0]
        auc = float((pos[:, None] > neg[None, :]).mean())
        o = m["overall"]
        print(
            f"{name:22s} illustrations kept {o['recall']:.3f}  text dropped {o['text_drop']:.3f}"
            f"  (ufal {m['ufal']['text_drop']:.3f}, DTA {m['dta_text']['text_drop']:.3f},"
            f" OCR-D {m['ocrd']['text_drop']:.3f})  pooled AUC {auc:.3f}"
        )
    print(f"CNN ({args.trunk} trunk) cost: {ms:.0f} ms/page on one core at {size[0]}x{size[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
