"""Fit and measure `--filter cnn`: the 39 layout features plus CNN principal components.

Run from the repo root:  python bench/filter_alternatives.py            (metrics only)
                         python bench/filter_alternatives.py --write    (writes the shipped JSON)
                         python bench/filter_alternatives.py --trunk imagenet --size 224x288

Why: the default filter misses the issue #3 target on modern archive pages, and this is
the best alternative found. It uses the same nested leave-one-document-out CV as
bench/fit_filter.py. The CNN is EfficientNet-Lite0: the shipped Vet Scanner model
(`--trunk vet`, what `--filter cnn` ships, through archive.cnn_filter) or the plain
ImageNet weights from pip (`--trunk imagenet`, measured only). Its pooled features are
reduced by a PCA fitted label-free on all pages, which makes the CV slightly optimistic.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from archive import cnn_filter as cf  # noqa: E402
from bench import fit_filter as ff  # noqa: E402

COMMAND = "python bench/filter_alternatives.py --write"
# The CNN runs only where the layout model's probability lies in [SKIP_BELOW, SKIP_ABOVE).
# The CV figures are the same for any band from [0.03, 0.8) to [0, 1], so these are a
# speed setting with margin, not a tuned result.
SKIP_BELOW, SKIP_ABOVE = 0.02, 0.9


@lru_cache(maxsize=1)
def imagenet_trunk():
    """The plain ImageNet Lite0, for comparison only; loaded once per run."""
    from vet.convert import imagenet_model

    return imagenet_model()


def imagenet_features(img, size: tuple[int, int]) -> np.ndarray:
    """Pooled features of the plain ImageNet Lite0, for comparison only."""
    import torch

    from vet.imaging import normalize

    px = torch.from_numpy(np.array(img.convert("RGB").resize(size))).permute(2, 0, 1)[None]
    with torch.inference_mode():
        return imagenet_trunk()(normalize(px)).pooled[0].numpy()


def cnn_features(
    root: Path, rows: list[dict[str, str]], size: tuple[int, int], trunk: str
) -> tuple[np.ndarray, float]:
    """Pooled CNN features of each page; also the one-core ms per page."""
    import torch

    torch.set_num_threads(1)
    vet_trunk = cf.load_trunk() if trunk == "vet" else None
    feats, spent = [], 0.0
    for r in tqdm(rows, desc=f"CNN {size[0]}x{size[1]}"):
        img = ff.load_page(root / r["file"])
        t0 = time.perf_counter()
        if vet_trunk is not None:
            feats.append(cf.pooled_features(img, vet_trunk, size))
        else:
            feats.append(imagenet_features(img, size))
        spent += time.perf_counter() - t0
    return np.vstack(feats), 1000 * spent / len(rows)


def report_line(name: str, prob: np.ndarray, thr: np.ndarray, y, src) -> dict:
    m = ff.metrics(prob >= thr, y, src)
    pos, neg = prob[y > 0], prob[y == 0]
    auc = float((pos[:, None] > neg[None, :]).mean())
    o = m["overall"]
    print(
        f"{name:22s} illustrations kept {o['recall']:.3f}  text dropped {o['text_drop']:.3f}"
        f"  (ufal {m['ufal']['text_drop']:.3f}, DTA {m['dta_text']['text_drop']:.3f},"
        f" OCR-D {m['ocrd']['text_drop']:.3f})  pooled AUC {auc:.3f}"
    )
    return {"auc": round(auc, 3), **m}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="256x320", help="CNN input WxH")
    ap.add_argument("--pca", type=int, default=8, help="principal components kept")
    ap.add_argument("--trunk", choices=("vet", "imagenet"), default="vet")
    ap.add_argument("--write", action="store_true", help=f"write {cf.CNN_MODEL_PATH.name}")
    args = ap.parse_args(argv)
    size = tuple(int(v) for v in args.size.lower().split("x"))
    if args.write and (args.trunk != "vet" or size != cf.CNN_SIZE):
        ap.error(f"--write ships only --trunk vet at {cf.CNN_SIZE[0]}x{cf.CNN_SIZE[1]}")

    root = ff.data_dir()
    if not (root / "pages" / "labels.csv").exists():
        print(f"no labelled pages under {root}; set BORDE_SHARED_DATA", file=sys.stderr)
        return 2
    rows = ff.read_labels(root)
    y = np.array([r["label"] == "illustration" for r in rows], dtype=float)
    groups = np.array([ff.group_of(r["file"]) for r in rows])
    src = np.array([ff.source_of(r["file"]) for r in rows])

    layout, _ = ff.compute_features(root, rows)
    cnn, ms = cnn_features(root, rows, size, args.trunk)
    pca_mean = cnn.mean(axis=0)
    _, _, vt = np.linalg.svd(cnn - pca_mean, full_matrices=False)
    comps = vt[: args.pca]
    x = np.hstack([layout, (cnn - pca_mean) @ comps.T])

    p_layout, t_layout = ff.nested_cv(layout, y, groups)
    report_line("39 layout features", p_layout, t_layout, y, src)
    p_cnn, t_cnn = ff.nested_cv(x, y, groups)
    report_line(f"+ CNN PCA {args.pca}", p_cnn, t_cnn, y, src)
    # as archive.cnn_filter judges: the layout model's sure verdicts stand, the CNN decides
    # the rest (each fold's layout probability comes from a model that never saw its page)
    sure_text = p_layout < np.minimum(SKIP_BELOW, t_cnn)
    sure_art = p_layout >= np.maximum(SKIP_ABOVE, t_cnn)
    cascade = np.where(sure_text | sure_art, p_layout, p_cnn)
    cascade_thr = np.where(sure_text, 1.0, np.where(sure_art, 0.0, t_cnn))
    cv = report_line("cascade, as shipped", cascade, cascade_thr, y, src)
    cnn_share = float(np.mean(~(sure_text | sure_art)))
    print(f"the CNN runs on {cnn_share:.0%} of these pages")
    print(f"CNN ({args.trunk} trunk) cost: {ms:.0f} ms/page on one core at {size[0]}x{size[1]}")

    if args.write:
        model = ff.fit_logreg(x, y)
        threshold = ff.pick_threshold(ff.logo_scores(x, y, groups), y)
        doc = {
            "version": 1,
            "features": list(ff.pf.FEATURE_NAMES) + [f"cnn_pc{i}" for i in range(args.pca)],
            "cnn_size": list(size),
            "trunk": "vet/model, blocks 11+ fine-tuned on cattle photos",
            "trunk_sha256": cf.trunk_digest(),
            **model,
            "threshold": round(threshold, 4),
            "skip_cnn_below": SKIP_BELOW,
            "skip_cnn_above": SKIP_ABOVE,
            "pca_mean": [round(float(v), 6) for v in pca_mean],
            "pca_components": [[round(float(v), 6) for v in row] for row in comps],
            "fitted_with": {
                "command": COMMAND,
                "date": dt.date.today().isoformat(),
                "data": f"shared/data/pages/labels.csv: {len(rows)} pages",
                "cv": {"scheme": "leave-one-document-out, nested threshold", **cv},
                "cnn_ms_per_page": round(ms, 1),
                "cnn_share_of_pages": round(cnn_share, 3),
            },
        }
        cf.CNN_MODEL_PATH.write_text(json.dumps(doc) + "\n", encoding="utf-8")
        print(f"wrote {cf.CNN_MODEL_PATH}, threshold {threshold:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
