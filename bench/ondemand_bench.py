"""The on-demand holder's cost: cold load, and RSS across release cycles.

    python bench/ondemand_bench.py [--cycles 30]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from tqdm import tqdm  # noqa: E402

from ondemand import OnDemand, rss_mb  # noqa: E402
from tests.tiny_models import build_image_classifier  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=30)
    args = parser.parse_args()
    from transformers import AutoModelForImageClassification

    with tempfile.TemporaryDirectory() as tmp:
        folder = build_image_classifier(Path(tmp) / "vit", hidden=384, layers=4)
        size_mb = sum(f.stat().st_size for f in folder.iterdir()) / 2**20

        def load(device: str):
            return AutoModelForImageClassification.from_pretrained(folder).to(device).eval()

        holder = OnDemand(load, policy="release", name="vit-bench")
        x = torch.rand(4, 3, 32, 32)
        rss_start = rss_mb()
        rss, loads, runs = [], [], []
        for _ in tqdm(range(args.cycles), desc="load/run/release"):
            with holder.use() as model:
                model(pixel_values=x)
            del model
            rss.append(rss_mb())
            loads.append(holder.last_stats.load_s)
            runs.append(holder.last_stats.run_s)
    print(f"model on disk          {size_mb:.1f} MB (ViT, real transformers from_pretrained)")
    print(f"cold load (1st)        {loads[0] * 1000:.0f} ms")
    print(f"warm load (median)     {sorted(loads)[len(loads) // 2] * 1000:.0f} ms")
    print(f"run (median)           {sorted(runs)[len(runs) // 2] * 1000:.1f} ms")
    print(f"RSS before any request {rss_start:.0f} MB")
    print(f"RSS after cycle 1      {rss[0]:.0f} MB")
    print(f"RSS after cycle {len(rss):<6d} {rss[-1]:.0f} MB ({(rss[-1] - rss[0]) / rss[0]:+.1%})")


if __name__ == "__main__":
    main()
