"""The lora package's cost on the CPU, on the tiny random SDXL.

    nice python bench/lora_bench.py [--resolution 128] [--steps 20] [--requests 20] [--threads 1]

Prints: training steps/s with and without latent caching; generation latency;
RSS before and after N generate/release requests. Offline: nothing is downloaded.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED = Path(
    os.environ.get("BORDE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def dataset_zip(path: Path, n: int, size: int) -> Path:
    """The archive's zip format from real scanned pages (a plain grey page when there are none)."""
    from PIL import Image

    pages = sorted((SHARED / "pages" / "ufal" / "DRAW").glob("*.jpg"))[:n]
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for i in range(n):
            im = Image.open(pages[i]).convert("RGB") if i < len(pages) else Image.new("RGB", (9, 9))
            im = im.resize((size, size))
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=92)
            name = f"images/bench_p{i + 1:05d}.jpg"
            zf.writestr(name, buf.getvalue())
            rows.append({"file_name": name, "text": f"an engraving, page {i + 1}"})
        zf.writestr("metadata.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return path


def bench_training(base: Path, zip_path: Path, tmp: Path, res: int, steps: int) -> dict:
    from lora.train import TrainConfig, train_lora

    out = {}
    for cache in (False, True):
        cfg = TrainConfig(
            dataset=str(zip_path),
            output_dir=str(tmp / f"train-{cache}"),
            base=str(base),
            resolution=res,
            max_steps=steps,
            cache_latents=cache,
            lr=1e-3,
        )
        t0 = time.perf_counter()
        result = train_lora(cfg)
        wall = time.perf_counter() - t0
        key = "cached" if cache else "uncached"
        out[f"train_steps_per_s_{key}"] = result.steps_run / result.loop_seconds
        out[f"train_wall_s_{key}"] = wall
    return out


def bench_generation(base: Path, lora_dir: Path, res: int, requests: int) -> dict:
    import lora
    from ondemand import rss_mb, trim_memory

    kw = {"base": str(base), "lora": str(lora_dir), "size": res, "steps": 10}
    trim_memory()
    rss_before = rss_mb()
    latencies, rss = [], []
    for i in range(requests):
        t0 = time.perf_counter()
        lora.generate("an engraving of a lighthouse", seed=i, **kw)
        latencies.append(time.perf_counter() - t0)
        rss.append(rss_mb())
    return {
        "gen_first_s": latencies[0],
        "gen_median_s": statistics.median(latencies[1:] or latencies),
        "rss_before_mb": rss_before,
        "rss_after_1_mb": rss[0],
        "rss_after_all_mb": rss[-1],
        "rss_growth_after_first_mb": rss[-1] - rss[0],
        "requests": requests,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--resolution", type=int, default=128)
    p.add_argument("--steps", type=int, default=20, help="training steps per run")
    p.add_argument("--images", type=int, default=8)
    p.add_argument("--requests", type=int, default=20)
    p.add_argument("--threads", type=int, default=1, help="torch threads (the CPU is shared)")
    args = p.parse_args()

    import torch

    from lora.tiny import build_tiny_sdxl

    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU only")
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        base = build_tiny_sdxl(tmp / "tiny")
        zip_path = dataset_zip(tmp / "ds.zip", args.images, args.resolution)
        res = bench_training(base, zip_path, tmp, args.resolution, args.steps)
        res.update(bench_generation(base, tmp / "train-True", args.resolution, args.requests))
    print(f"\n== lora bench (tiny SDXL, {args.resolution}px, CPU) ==")
    print(f"training, no latent cache : {res['train_steps_per_s_uncached']:.2f} steps/s")
    print(f"training, latent cache    : {res['train_steps_per_s_cached']:.2f} steps/s")
    print(
        f"generation (10 steps, LoRA fused, load+run+release): first "
        f"{res['gen_first_s']:.2f} s, median {res['gen_median_s']:.2f} s"
    )
    print(
        f"RSS before {res['rss_before_mb']:.0f} MB, after 1 request "
        f"{res['rss_after_1_mb']:.0f} MB, after {res['requests']} requests "
        f"{res['rss_after_all_mb']:.0f} MB ({res['rss_growth_after_first_mb']:+.0f} MB)"
    )
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
