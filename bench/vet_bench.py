"""CPU benchmark of the vet model: cold load, latency, batch throughput, RSS over requests.

    python bench/vet_bench.py [--model vet/model] [--requests 50]

Targets (issues #4, #12): cold load <= 1 s, load + infer + release p50 <= 150 ms on
one thread, RSS after 50 load/infer/release requests within 5% of the first request's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("BORDE_FORCE_CPU", "1")


def photos(n: int) -> list:
    """Real condition photos when the shared data is mounted, else textured synthetic ones."""
    from PIL import Image

    shared = Path(os.environ.get("BORDE_SHARED_DATA") or ROOT.parent / "shared" / "data")
    files = sorted((shared / "livestock/conditions").glob("*/*.jpg"))[::37][:n]
    if len(files) >= n:
        from vet.imaging import load_image

        return [load_image(f) for f in files]
    import numpy as np

    rng = np.random.default_rng(0)
    return [Image.fromarray(rng.integers(0, 255, (320, 320, 3), dtype=np.uint8))
            for _ in range(n)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--latency-photos", type=int, default=40)
    ap.add_argument("--threads", type=int, default=0,
                    help="torch intra-op threads (0 = torch default). On a busy shared CPU, "
                         "1 avoids threads waiting on each other for every small op")
    args = ap.parse_args()

    from tqdm import tqdm

    t = time.perf_counter()
    import torch
    import transformers  # noqa: F401

    import vet.modeling_efficientnet_lite  # noqa: F401
    import_s = time.perf_counter() - t

    from ondemand import rss_mb, trim_memory
    from vet.imaging import to_tensor
    from vet.model_io import holder, load_model, model_source
    from vet.pipeline import triage_many

    src = model_source(args.model)
    imgs = photos(max(32, args.latency_photos))
    if args.threads:
        torch.set_num_threads(args.threads)
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[0]
    print(f"torch threads {torch.get_num_threads()}, CPUs {os.cpu_count()}, "
          f"load average {load} (other jobs share this machine)")

    t = time.perf_counter()
    model = load_model(src)
    cold = time.perf_counter() - t
    loads = []
    for _ in range(5):
        t = time.perf_counter()
        m2 = load_model(src)
        loads.append(time.perf_counter() - t)
        del m2
    print(f"imports (torch+transformers+vet): {import_s:.2f} s")
    print(f"cold load: {cold:.3f} s; warm reload median {statistics.median(loads):.3f} s "
          f"(target <= 1 s)")

    lat = []
    fit = getattr(model.config, "image_fit", "crop")
    print(f"image fit: {fit}")
    with torch.inference_mode():
        model(pixel_values=to_tensor(imgs[:1], fit=fit))  # first-call allocations
        for img in tqdm(imgs[: args.latency_photos], desc="latency", unit="photo"):
            t = time.perf_counter()
            out = model(pixel_values=to_tensor([img], fit=fit))
            out.logits.softmax(-1)
            out.reference_logits.softmax(-1)
            lat.append(time.perf_counter() - t)
        lat.sort()
        p50, p95 = statistics.median(lat), lat[int(0.95 * (len(lat) - 1))]
        print(f"latency per photo (preprocess + forward, model kept): p50 {p50 * 1000:.0f} ms, "
              f"p95 {p95 * 1000:.0f} ms (target p50 <= 150 ms)")
        t = time.perf_counter()
        model(pixel_values=to_tensor(imgs[:32], fit=fit))
        b = time.perf_counter() - t
        print(f"batch of 32: {b:.2f} s = {32 / b:.1f} photos/s")
    del model
    trim_memory()

    h = holder(src, "release")
    rss_before = rss_mb()
    per_req, rss = [], []
    for i in tqdm(range(args.requests), desc="load/infer/release", unit="req"):
        t = time.perf_counter()
        triage_many([imgs[i % len(imgs)]], model=src, policy="release")
        per_req.append(time.perf_counter() - t)
        rss.append(rss_mb())
    first, last = rss[0], rss[-1]
    print("RSS every 10 requests (MB):", " ".join(f"{r:.0f}" for r in rss[::10]))
    print(f"RSS before requests {rss_before:.0f} MB; after request 1 {first:.0f} MB; "
          f"after request {args.requests} {last:.0f} MB ({(last - first) / first:+.1%}, "
          f"target within 5%); max {max(rss):.0f} MB")
    print(f"end-to-end request (load + infer + release): p50 "
          f"{statistics.median(per_req) * 1000:.0f} ms")
    del h
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
