"""The lora package's cost on the CPU, on the tiny random SDXL.

    nice python bench/lora_bench.py [--resolution 128] [--steps 20] [--requests 20] [--threads 1]

Prints: training steps/s with and without latent caching; steps/s with aspect-ratio
buckets against ``--no-buckets`` on real woodcut crops of every shape (the Moreno
regions in the shared data); generation latency; RSS before and after N
generate/release requests. Offline: nothing is downloaded. The CPU is shared: the
timings are indicative, the ratios taken in one run are what to compare.
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
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHARED = Path(
    os.environ.get("BORDE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)


def write_zip(path: Path, images: Iterable, name: str, text: str) -> Path:
    """The archive's zip format: JPEGs under ``images/`` and their metadata.jsonl rows.

    ``name`` and ``text`` are formatted with the 1-based index ``i``."""
    rows = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for i, im in enumerate(images, start=1):
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=92)
            zf.writestr(name.format(i=i), buf.getvalue())
            rows.append({"file_name": name.format(i=i), "text": text.format(i=i)})
        zf.writestr("metadata.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    return path


def dataset_zip(path: Path, n: int, size: int) -> Path:
    """Real scanned pages, squared (a plain grey page when there are none)."""
    from PIL import Image

    pages = sorted((SHARED / "pages" / "ufal" / "DRAW").glob("*.jpg"))[:n]
    images = (
        (Image.open(pages[i]).convert("RGB") if i < len(pages) else Image.new("RGB", (9, 9)))
        .resize((size, size))
        for i in range(n)
    )
    return write_zip(path, images, "images/bench_p{i:05d}.jpg", "an engraving, page {i}")


def crops_zip(path: Path, n: int, long_side: int) -> Path:
    """Figure crops like the archive's: ``n`` real woodcut regions spread over every
    aspect ratio (synthetic shapes when the shared data is missing)."""
    import csv

    import numpy as np
    from PIL import Image

    regions = SHARED / "figures" / "moreno" / "regions.csv"
    boxes = []
    if regions.is_file():
        with open(regions, newline="") as fh:
            boxes = [(r["file"], *(int(r[k]) for k in ("x0", "y0", "x1", "y1")))
                     for r in csv.DictReader(fh) if r["kind"] == "illustration"]  # fmt: skip
        boxes.sort(key=lambda b: (b[3] - b[1]) / (b[4] - b[2]))
        boxes = boxes[:: max(1, len(boxes) // n)][:n]
    rng = np.random.default_rng(0)

    def crop(i: int):
        if i < len(boxes):
            file, *box = boxes[i]
            im = Image.open(SHARED / file).convert("RGB").crop(tuple(box))
        else:
            ratio = [0.5, 0.75, 1.0, 1.33, 2.0][i % 5]
            im = Image.fromarray(rng.integers(0, 255, (200, int(200 * ratio), 3), np.uint8))
        scale = long_side / max(im.size)
        return im.resize((max(1, round(im.width * scale)), max(1, round(im.height * scale))))

    images = (crop(i) for i in range(n))
    return write_zip(path, images, "images/bench_p{i:05d}_f1.jpg", "a woodcut, figure {i}")


def train_once(base: Path, zip_path: Path, out: Path, res: int, steps: int, **kw) -> dict:
    from lora.train import TrainConfig, train_lora

    cfg = TrainConfig(datasets=[str(zip_path)], output_dir=str(out), base=str(base),
                      resolution=res, max_steps=steps, lr=1e-3, **kw)  # fmt: skip
    t0 = time.perf_counter()
    result = train_lora(cfg)
    later = result.step_seconds[1:] or result.step_seconds  # the first step warms up
    return {
        "steps_per_s": result.steps_run / result.loop_seconds,
        "median_step_s": statistics.median(later),
        "wall_s": time.perf_counter() - t0,
    }


def bench_buckets(base: Path, tmp: Path, res: int, steps: int, images: int, batch: int,
                  rounds: int = 2) -> dict:  # fmt: skip
    """Buckets against the square center crop, on the same crops, same steps and batch.

    The two alternate for ``rounds`` rounds and each keeps its fastest: the CPU is shared."""
    from lora.train_data import batches_per_epoch, load_training_set

    zip_path = crops_zip(tmp / "crops.zip", images, res * 3 // 2)
    out: dict = {"bucket_batch_size": batch, "bucket_rounds": rounds}
    for i in range(rounds):
        for buckets in (False, True):
            key = "buckets" if buckets else "no_buckets"
            run = train_once(base, zip_path, tmp / f"train-{key}-{i}", res, steps,
                             buckets=buckets, batch_size=batch)  # fmt: skip
            if key not in out or run["steps_per_s"] > out[key]["steps_per_s"]:
                out[key] = run
            out.setdefault(f"{key}_all_steps_per_s", []).append(round(run["steps_per_s"], 2))
    for buckets in (False, True):
        key = "buckets" if buckets else "no_buckets"
        data = load_training_set([str(zip_path)], res, buckets)
        mean_area = statistics.mean(s.bucket[0] * s.bucket[1] for s in data.samples) / res**2
        out[key].update(images=len(data.samples), buckets=len(data.histogram()),
                        batches_per_epoch=batches_per_epoch(data.slot_buckets(), batch),
                        mean_area_vs_square=round(mean_area, 3))  # fmt: skip
    out["buckets_vs_no_buckets_speed"] = (
        out["buckets"]["steps_per_s"] / out["no_buckets"]["steps_per_s"]
    )
    return out


def bench_training(base: Path, zip_path: Path, tmp: Path, res: int, steps: int) -> dict:
    out = {}
    for cache in (False, True):
        run = train_once(base, zip_path, tmp / f"train-{cache}", res, steps, cache_latents=cache)
        key = "cached" if cache else "uncached"
        out[f"train_steps_per_s_{key}"] = run["steps_per_s"]
        out[f"train_wall_s_{key}"] = run["wall_s"]
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
    p.add_argument("--bucket-steps", type=int, default=40, help="steps per bucket/no-bucket run")
    p.add_argument("--bucket-images", type=int, default=16, help="woodcut crops of every shape")
    p.add_argument("--bucket-batch", type=int, default=2)
    p.add_argument("--bucket-rounds", type=int, default=2, help="each mode keeps its fastest")
    p.add_argument("--bucket-resolution", type=int, default=256,
                   help="at 128 the bucket set has only five sizes")
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
        res.update(bench_buckets(base, tmp, args.bucket_resolution, args.bucket_steps,
                                 args.bucket_images, args.bucket_batch,
                                 args.bucket_rounds))  # fmt: skip
        res.update(bench_generation(base, tmp / "train-True", args.resolution, args.requests))
    print(f"\n== lora bench (tiny SDXL, {args.resolution}px, CPU) ==")
    print(f"training, no latent cache : {res['train_steps_per_s_uncached']:.2f} steps/s")
    print(f"training, latent cache    : {res['train_steps_per_s_cached']:.2f} steps/s")
    for key, what in (("no_buckets", "--no-buckets (square crop)"), ("buckets", "buckets")):
        r = res[key]
        print(f"training, {what:26}: {r['steps_per_s']:.2f} steps/s (median step "
              f"{r['median_step_s'] * 1000:.0f} ms; {r['images']} crops in {r['buckets']} "
              f"bucket(s), {r['batches_per_epoch']} batches of <= {res['bucket_batch_size']} "
              f"per epoch, mean area {r['mean_area_vs_square']:.2f} x res^2)")  # fmt: skip
    print(f"(buckets at {args.bucket_resolution}px, {args.bucket_steps} steps a run, fastest of "
          f"{args.bucket_rounds}; all runs: no buckets {res['no_buckets_all_steps_per_s']}, "
          f"buckets {res['buckets_all_steps_per_s']} steps/s)")  # fmt: skip
    print(f"buckets / no buckets speed: {res['buckets_vs_no_buckets_speed']:.2f} "
          f"(steps/s ratio, same run; indicative on a shared CPU)")  # fmt: skip
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
