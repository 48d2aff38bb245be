"""Per-source precision/recall of the shipped filter, and a score histogram PNG.

    python bench/filter_report.py /tmp/filter_scores.png [--filter std]

These are in-sample numbers for the shipped model (it was fitted on these pages); the
honest, grouped-CV numbers are printed by bench/fit_filter.py and stored in the JSON.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archive import filter as pf  # noqa: E402
from bench.fit_filter import data_dir, load_page, metrics, read_labels, source_of  # noqa: E402


def histogram_png(scores: np.ndarray, y: np.ndarray, threshold: float, out: Path) -> None:
    """Two stacked histograms (illustration above, text below) with the threshold line."""
    lo, hi = float(min(scores.min(), threshold)), float(max(scores.max(), threshold))
    bins = np.linspace(lo, hi + 1e-9, 41)
    w, h, pad = 640, 360, 20
    img = Image.new("RGB", (w, h), "white")
    draw = ImageDraw.Draw(img)
    half = (h - 3 * pad) // 2
    for k, (mask, colour, label) in enumerate(
        ((y > 0, (200, 60, 40), "illustration"), (y == 0, (40, 90, 200), "text"))
    ):
        counts, _ = np.histogram(scores[mask], bins)
        top = pad + k * (half + pad)
        bw = (w - 2 * pad) / len(counts)
        for i, c in enumerate(counts):
            bh = half * c / max(counts.max(), 1)
            x0 = pad + i * bw
            draw.rectangle((x0, top + half - bh, x0 + bw - 1, top + half), fill=colour)
        draw.text((pad + 4, top), f"{label} (n={int(mask.sum())})", fill=(0, 0, 0))
    tx = pad + (threshold - lo) / (hi - lo + 1e-9) * (w - 2 * pad)
    draw.line((tx, pad, tx, h - pad), fill=(0, 0, 0), width=2)
    draw.text(
        (pad, h - pad + 4), f"score {lo:.2f} .. {hi:.2f}, threshold {threshold:.3f}", (0, 0, 0)
    )
    img.save(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("png", type=Path, help="where to save the score histogram")
    ap.add_argument("--filter", default="default", choices=pf.FILTER_NAMES)
    args = ap.parse_args(argv)
    root = data_dir()
    rows = read_labels(root)
    filt = pf.make_filter(args.filter)
    verdicts = [filt.judge(load_page(root / r["file"])) for r in tqdm(rows, desc="judging")]
    y = np.array([r["label"] == "illustration" for r in rows], dtype=float)
    src = np.array([source_of(r["file"]) for r in rows])
    kept = np.array([v.kept for v in verdicts])
    for name, block in metrics(kept, y, src).items():
        print(f"{name:10s} {block}")
    scores = np.array([v.score for v in verdicts])
    histogram_png(scores, y, filt.threshold, args.png)
    print(f"histogram -> {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
