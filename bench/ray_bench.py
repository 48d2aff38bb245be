"""Ray's cost on one machine: ``--ray local`` against ``--workers 2``, same PDFs, one run.

The bench magazine (bench/magazine.py) is written as 6 PDFs (different page orders
from one pool of scans, so plates repeat across them), synced and read once, then built
both ways with the same options. Printed: pages/s over the whole command (Ray's start-up
included) and over the build itself (``_SUCCESS``'s own clock minus Ray's start-up), the
overhead against ``--workers 2``, and the peak RSS of the driver, of each worker and of
Ray's own daemons, sampled every 50 ms. The two outputs are checked to hold the same
items, byte for byte.

    python bench/ray_bench.py [--pages 300] [--part-pages 200] [--repeat 2]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.archive_bench import settle  # noqa: E402
from bench.magazine import page_pool, write_magazine_pdf  # noqa: E402

PDFS = 6


def _role(proc: psutil.Process, driver: int) -> str:
    """driver, worker (a pool process, or a Ray worker running a unit), idle worker, or
    the name of one of Ray's own processes."""
    if proc.pid == driver:
        return "driver"
    cmd = proc.cmdline() or [proc.name()]
    if cmd[0].startswith("ray::"):  # a Ray worker's title: its task, IDLE, or an actor
        title = cmd[0].split()[0][5:]
        if title == "build_unit":
            return "worker"
        return "idle worker" if title == "IDLE" else title.split(".")[0]
    ray_part = next((c for c in cmd if "/site-packages/ray/" in c), None)
    if ray_part is None:
        return "worker"  # a --workers pool process
    name = Path(ray_part).name.removesuffix(".py")
    return "idle worker" if name == "default_worker" else name


@dataclass
class Run:
    seconds: float
    peaks: dict[int, tuple[str, float]]  # pid -> (role, peak RSS MB)
    cpu: dict[int, float]  # pid -> user + sys seconds, as last seen


def measure(cmd: list[str]) -> Run:
    """Wall seconds, and each process's role, peak RSS and CPU time in the command's tree.

    CPU seconds are the fairer yardstick on a shared machine: other users' load stretches
    the wall clock, not the work done.
    """
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    run = Run(0.0, {}, {})

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                tree = [root, *root.children(recursive=True)]
            except psutil.Error:
                break
            for p in tree:
                try:
                    role, rss = _role(p, proc.pid), p.memory_info().rss / 2**20
                    run.cpu[p.pid] = sum(p.cpu_times()[:2])
                except psutil.Error:
                    continue
                old_role, old = run.peaks.get(p.pid, (role, 0.0))
                if old_role == "worker":  # once seen running a unit, a worker for good
                    role = old_role
                run.peaks[p.pid] = (role, max(old, rss))
            time.sleep(0.05)

    t0 = time.perf_counter()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    proc.communicate()
    run.seconds = time.perf_counter() - t0
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed with exit {proc.returncode}")
    return run


def cpu_split(run: Run) -> tuple[float, float]:
    """CPU seconds of the archive's own processes (driver, workers) and of Ray's."""
    ours = sum(c for pid, c in run.cpu.items() if run.peaks[pid][0] in ("driver", "worker"))
    return ours, sum(run.cpu.values()) - ours


def items(zips: list[Path]) -> tuple[list[tuple[str, int]], list[list[str]]]:
    """Every image and caption entry with its CRC, in order, and every regions.csv row."""
    entries: list[tuple[str, int]] = []
    rows: list[list[str]] = []
    for z in zips:
        with zipfile.ZipFile(z) as zf:
            entries += [(i.filename, i.CRC) for i in zf.infolist()
                        if i.filename.startswith("images/")]
            rows += list(csv.reader(io.StringIO(zf.read("regions.csv").decode())))[1:]
    return entries, rows


def _rss_summary(run: Run) -> str:
    by_role: dict[str, list[float]] = defaultdict(list)
    for role, rss in run.peaks.values():
        by_role[role].append(rss)
    driver = by_role.pop("driver", [0.0])[0]
    workers = sorted(by_role.pop("worker", []))
    text = f"driver {driver:.0f}, workers " + (" / ".join(f"{w:.0f}" for w in workers) or "-")
    if by_role:
        own = {k: sum(v) for k, v in by_role.items()}
        text += (f"; Ray's own processes {sum(own.values()):.0f} in all ("
                 + ", ".join(f"{k} {v:.0f}" for k, v in sorted(own.items(), key=lambda x: -x[1]))
                 + ")")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="pages over all 6 PDFs")
    parser.add_argument("--part-pages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2, help="runs per mode; fastest shown")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ray-bench-") as tmp:
        tmp = Path(tmp)
        pool = page_pool()
        per = args.pages // PDFS
        pdfs = []
        for k in range(PDFS):
            pdfs.append(tmp / f"magazine-{k + 1}.pdf")
            write_magazine_pdf(pdfs[-1], per, pool, seed=k)
            settle(pdfs[-1])
        pages = per * PDFS
        mb = sum(p.stat().st_size for p in pdfs) / 2**20
        print(f"bench: the bench magazine as {PDFS} PDFs of {per} pages ({pages} pages, "
              f"{mb:.0f} MB of 300-dpi scans), figure mode, default options; "
              f"--part-pages {args.part_pages}; fastest of {args.repeat}\n")
        base = [sys.executable, "-m", "archive", *map(str, pdfs)]
        single_zip, ray_dir = tmp / "single.zip", tmp / "parts"
        runs: dict[str, list] = {"single": [], "ray": []}
        for _ in range(max(1, args.repeat)):
            single_zip.unlink(missing_ok=True)
            runs["single"].append(measure([*base, "-o", str(single_zip), "--workers", "2"]))
            for f in ray_dir.glob("*") if ray_dir.exists() else []:
                f.unlink()
            run = measure([*base, "-o", str(ray_dir), "--ray", "local", "--workers", "2",
                           "--part-pages", str(args.part_pages)])
            runs["ray"].append((run, json.loads((ray_dir / "_SUCCESS").read_text())))
        single = min(runs["single"], key=lambda r: r.seconds)
        ray_run, summary = min(runs["ray"], key=lambda r: r[0].seconds)
        same = items([single_zip]) == items(sorted(ray_dir.glob("part-*.zip")))
        s1, sr = single.seconds, ray_run.seconds
        build = summary["seconds"] - summary["ray_start_s"]
        (c1, _), (cr, cr_ray) = cpu_split(single), cpu_split(ray_run)
        rows = [
            ("archive --workers 2", pages / s1, s1, "-", f"{c1:.1f}", "-"),
            ("--ray local, command", pages / sr, sr, f"{1 - s1 / sr:+.1%}",
             f"{cr:.1f} + {cr_ray:.1f}", f"{(cr + cr_ray) / c1 - 1:+.1%}"),
            ("--ray local, build", pages / build, build, f"{1 - s1 / build:+.1%}",
             f"{cr:.1f}", f"{cr / c1 - 1:+.1%}"),
        ]
        print(f"{'run':<23}{'pages/s':>8}{'wall s':>8}{'slower':>8}{'CPU s':>14}{'more CPU':>10}")
        for name, pps, s, over, cpu, more in rows:
            print(f"{name:<23}{pps:>8.1f}{s:>8.1f}{over:>8}{cpu:>14}{more:>10}")
        print(f"\n'command' is the whole CLI run, Ray's start-up ({summary['ray_start_s']:.1f} s) "
              "included; 'build' is _SUCCESS's clock without it. CPU s: the archive's "
              "processes (+ Ray's own daemons and actor).")
        print(f"{len(summary['parts'])} parts, {summary['items']} items "
              f"({summary['duplicates']} duplicates dropped); union of the parts equals the "
              f"single zip: {'yes' if same else 'NO'}")
        print(f"peak RSS MB, --workers 2: {_rss_summary(single)}")
        print(f"peak RSS MB, --ray local: {_rss_summary(ray_run)}")
        workers = summary["worker_peak_rss_mb"]
        print(f"  (Ray task workers' own peak, from _SUCCESS: driver "
              f"{summary['driver_peak_rss_mb']:.0f}, workers "
              + " / ".join(f"{v:.0f}" for v in sorted(workers.values())) + ")")


if __name__ == "__main__":
    main()
