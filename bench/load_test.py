"""Drive the running app with concurrent gradio_client users and report latencies.

Each client alternates vet requests (a real photo) and small archive jobs (a
PDF of real pages under a name of its own), and checks that every answer is
its own: the vet result matches what that photo gets alone, and the archive
zip is named after, and holds the pages of, the PDF that client sent.

    python bench/load_test.py [--clients 8] [--seconds 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from collections import defaultdict
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.rss import tree_rss_mb  # noqa: E402
from tests.e2e.harness import running_app  # noqa: E402
from tests.pdf_factory import labelled_pages, scans_pdf  # noqa: E402


def _server_pid(port_url: str) -> int | None:
    port = int(port_url.rstrip("/").rsplit(":", 1)[1])
    for conn in psutil.net_connections(kind="tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN:
            return conn.pid
    return None


def run(clients: int, seconds: float, shared: Path, max_rss_mb: float | None = None) -> dict:
    """Run the load; returns latencies per endpoint, errors, crossed outputs and peak RSS."""
    from gradio_client import Client, handle_file

    cond = shared / "livestock" / "conditions"
    photos = [next((cond / c).glob("*.jpg")) for c in ("healthy", "lumpy_skin", "pinkeye",
                                                       "mastitis")]
    pages = [p for p, _ in labelled_pages(shared)]
    lat: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    crossed: list[str] = []
    peak = [0.0]
    with tempfile.TemporaryDirectory(prefix="borde-load-") as tmp, running_app() as url:
        tmp = Path(tmp)
        pdfs = [scans_pdf(tmp / f"client{i}.pdf", pages[i * 3 : i * 3 + 3])
                for i in range(clients)]
        base = Client(url, verbose=False)
        expected = {p: base.predict(handle_file(str(p)), "en", api_name="/vet_run")[0]["label"]
                    for p in photos}
        pid = _server_pid(url)
        stop = time.monotonic() + seconds

        def sample() -> None:
            proc = psutil.Process(pid) if pid else None
            while proc and time.monotonic() < stop + 5:
                peak[0] = max(peak[0], tree_rss_mb(proc))
                time.sleep(0.2)

        def user(i: int) -> None:
            client = Client(url, verbose=False)
            n = 0
            while time.monotonic() < stop:
                try:
                    if n % 2 == 0:
                        photo = photos[(i + n) % len(photos)]
                        t0 = time.perf_counter()
                        out = client.predict(handle_file(str(photo)), "en", api_name="/vet_run")
                        lat["vet_run"].append(time.perf_counter() - t0)
                        if out[0]["label"] != expected[photo]:
                            crossed.append(f"client {i}: vet answer for {photo.name} differs")
                    else:
                        t0 = time.perf_counter()
                        out = client.predict([handle_file(str(pdfs[i]))], [], "page", "std", "0",
                                             "512", "pad", False, "page {page} of {source}", "",
                                             24, api_name="/archive_run")
                        lat["archive_run"].append(time.perf_counter() - t0)
                        zpath = Path(out[3]) if out[3] else None
                        if zpath is None or not zpath.name.startswith(f"client{i}_"):
                            crossed.append(f"client {i}: got archive {zpath}")
                        else:
                            with zipfile.ZipFile(zpath) as zf:
                                names = [n for n in zf.namelist() if n.endswith(".jpg")]
                            if not names or any(f"client{i}_p" not in x for x in names):
                                crossed.append(f"client {i}: zip holds {names[:2]}")
                except Exception as exc:  # noqa: BLE001 - every failure is counted
                    errors.append(f"client {i}: {type(exc).__name__}: {exc}"[:300])
                n += 1

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        threads = [threading.Thread(target=user, args=(i,)) for i in range(clients)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    return {"latency": dict(lat), "errors": errors, "crossed": crossed, "peak_rss_mb": peak[0]}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 \
        else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    res = run(args.clients, args.seconds, args.shared)
    print(f"{args.clients} clients for {args.seconds:.0f} s")
    for name, values in sorted(res["latency"].items()):
        print(f"  {name:<12} n={len(values):<4} p50 {pct(values, 50):6.2f} s   "
              f"p95 {pct(values, 95):6.2f} s")
    print(f"  errors {len(res['errors'])}, crossed outputs {len(res['crossed'])}")
    print(f"  server peak RSS (process tree) {res['peak_rss_mb']:.0f} MB")
    for line in res["errors"][:5] + res["crossed"][:5]:
        print("   ", line)


if __name__ == "__main__":
    main()
