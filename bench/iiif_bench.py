"""IIIF input against the PDF path on the same book: bytes fetched, pages/s and peak RSS.

Issue #64's targets, in one run on one machine:
  * bytes: a book with about 30% picture pages, built through IIIF from IIPImage (Image API
    2.1 level 1, tests.iiif_servers.iipimage), fetches at most 25% of the bytes of its
    full-resolution images (each page's ``full/full/0/default.jpg`` from the same server:
    what img2dataset and the IIIF downloaders fetch). Counted at the server side, by a
    counting reverse proxy in front of the image server and the manifest, by kind;
  * speed: ``python -m archive MANIFEST_URL --workers 2`` runs at least as many pages/s as
    ``python -m archive book.pdf --workers 2`` on a PDF of the same JPEGs (kept as they are,
    each page the image's pixels at 150 dpi), with a peak RSS of the process tree <= 250 MB.
    A static level-0 layout (tests.iiif_servers.level0: only listed sizes, no regions) is
    the third row.

The book: picture pages from figures/moreno (1600 px scans of plates) and text pages from
pages/dta_text (1600 px binarized text pages, as JPEG), interleaved by a seeded draw.
Timed builds go straight to the servers (no proxy on the way); each row runs ``--repeat``
times in rounds that run every row once, so a slow spell of the shared machine falls on
all of them. The servers run on the same cores as the build: a library's would not.

    python bench/iiif_bench.py [--pages 100] [--picture-share 0.3] [--repeat 3] [--workers 2]
                               [--seed 0] [--skip-pdf] [--skip-level0] [--data DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.archive_bench import byte_compiled, dataset_items, measure, settle  # noqa: E402
from tests import iiif_servers  # noqa: E402

# The shared data set of the project (read only), beside the checkout: /work/shared/data.
DATA = ROOT.parent / "shared" / "data"
PICTURES = "figures/moreno/images/*.jpg"  # 103 plate scans, 1108-1124 x 1600 px
TEXTS = "pages/dta_text/*.png"  # 120 binarized text pages, 1600 x ~2400 px
TEXT_JPEG_QUALITY = iiif_servers.JPEG_QUALITY  # the quality IIPImage's pyramids are stored at
PDF_DPI = 150  # the PDF's page size: the image's pixels at 150 dpi
TARGET_SHARE = 0.25  # issue #64: bytes fetched <= 25% of the full-resolution images'
TARGET_RSS_MB = 250  # issue #64: peak RSS of the build at 2 workers
MANIFEST_PREFIX = "m"  # the counting proxy sends /m/... to the manifest server
SUMMARY = re.compile(r"([\d.]+) pages/s, peak RSS (\d+) MB")  # the CLI's summary line


# --- the book ---------------------------------------------------------------------------


def make_book(data: Path, pages: int, share: float, seed: int, folder: Path
              ) -> list[tuple[Path, str]]:
    """``pages`` JPEGs in ``folder`` (p001.jpg, ...), about ``share`` of them pictures at
    seeded places; (path, "picture" or "text") in page order. Picture JPEGs are copied as
    they are; text PNGs are written as JPEG, as a library serves them."""
    from PIL import Image

    pictures, texts = sorted(data.glob(PICTURES)), sorted(data.glob(TEXTS))
    if not pictures or not texts:
        raise SystemExit(f"no pages under {data}: expected {PICTURES} and {TEXTS}")
    rng = random.Random(seed)
    n_pictures = round(pages * share)
    picture_at = set(rng.sample(range(pages), n_pictures))
    folder.mkdir(parents=True, exist_ok=True)
    book, used = [], {"picture": 0, "text": 0}
    for i in range(pages):
        kind = "picture" if i in picture_at else "text"
        pool = pictures if kind == "picture" else texts
        src = pool[used[kind] % len(pool)]  # cycles only past 103 pictures / 120 texts
        used[kind] += 1
        dst = folder / f"p{i + 1:03d}.jpg"
        if src.suffix.lower() == ".jpg":
            shutil.copyfile(src, dst)
        else:
            with Image.open(src) as img:
                img.convert("L").save(dst, "JPEG", quality=TEXT_JPEG_QUALITY)
        book.append((dst, kind))
    return book


def write_pdf(images: list[Path], pdf: Path) -> None:
    """An image-only PDF of the JPEGs as they are, each page the image at ``PDF_DPI``."""
    import pymupdf
    from PIL import Image

    doc = pymupdf.open()
    for path in images:
        with Image.open(path) as img:
            w, h = img.size
        page = doc.new_page(width=w * 72 / PDF_DPI, height=h * 72 / PDF_DPI)
        page.insert_image(page.rect, stream=path.read_bytes())
    doc.save(pdf)
    doc.close()


# --- a counting reverse proxy -----------------------------------------------------------


@dataclass
class Counts:
    """Response body bytes and requests by kind, as the server side sent them."""

    bytes: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)  # images whose whole page came once
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, path: str, size: int) -> None:
        with self.lock:
            kind = self._kind(path)
            self.bytes[kind] = self.bytes.get(kind, 0) + size
            self.requests[kind] = self.requests.get(kind, 0) + 1

    def _kind(self, path: str) -> str:
        """manifest, info.json, previews (an image's first whole page), whole pages again
        (a closer look; on level 0, the pictures), regions (the pictures' own pixels)."""
        parts = path.split("?")[0].strip("/").split("/")
        if parts[0] == MANIFEST_PREFIX:
            return "manifest"
        if parts[-1] == "info.json":
            return "info.json"
        if len(parts) >= 2 and parts[1] == "full":
            if parts[0] in self.seen:
                return "whole pages again"
            self.seen.add(parts[0])
            return "previews"
        return "regions"

    def reset(self) -> None:
        with self.lock:
            self.bytes.clear()
            self.requests.clear()
            self.seen.clear()


class _CountingHandler(BaseHTTPRequestHandler):
    """Forwards a GET to its upstream and counts the body it sends back."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the image servers do
    images: str
    manifests: str
    counts: Counts

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        head = f"/{MANIFEST_PREFIX}/"
        upstream = self.manifests if self.path.startswith(head) else self.images
        path = self.path[len(head) - 1:] if upstream == self.manifests else self.path
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            response = opener.open(upstream + path, timeout=60)
        except urllib.error.HTTPError as error:
            response = error
        with response:
            body = response.read()
            ctype = response.headers.get("Content-Type", "application/octet-stream")
        if "json" in ctype:  # an info.json names its server: name the proxy instead
            body = body.replace(upstream.encode(), self._base().encode())
        self.counts.add(self.path, len(body))
        self.send_response(response.status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _base(self) -> str:
        return f"http://{iiif_servers.HOST}:{self.server.server_address[1]}"


@contextmanager
def counting_proxy(images: str, manifests: str) -> Iterator[tuple[str, Counts]]:
    """A proxy whose /m/<key> is ``manifests``/<key> and anything else ``images``/...;
    yields its base URL and its live counts."""
    counts = Counts()
    handler = type("CountingHandler", (_CountingHandler,),
                   {"images": images, "manifests": manifests, "counts": counts})
    server = ThreadingHTTPServer((iiif_servers.HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{iiif_servers.HOST}:{server.server_address[1]}", counts
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def full_resolution_bytes(base: str, stems: list[str]) -> int:
    """What a whole-image downloader fetches: each page's full/full/0/default.jpg."""
    total = 0
    for stem in stems:
        with iiif_servers._no_proxy_open(f"{base}/{stem}/full/full/0/default.jpg", 60) as r:
            total += len(r.read())
    return total


# --- the bench --------------------------------------------------------------------------


@dataclass
class Row:
    """One way of building the book: its command and what its runs measured."""

    name: str
    cmd: list[str]
    out: Path
    seconds: list[float] = field(default_factory=list)
    own_speed: list[float] = field(default_factory=list)  # pages/s its summary printed
    peak_mb: float = 0.0  # the process tree's, sampled
    own_peak_mb: float = 0.0  # its summary's: the biggest one process (main or a worker)
    items: int = 0


def build_cmd(source: str, out: Path, workers: int) -> list[str]:
    return [sys.executable, "-m", "archive", source, "-o", str(out), "--workers", str(workers)]


def counted(name: str, source: str, out: Path, workers: int, counts: Counts
            ) -> dict[str, tuple[int, int]]:
    """One build through the counting proxy: {kind: (requests, bytes)}."""
    counts.reset()
    out.unlink(missing_ok=True)
    print(f"  counting the bytes of one {name} build ...", file=sys.stderr)
    measure(build_cmd(source, out, workers))
    return {k: (counts.requests[k], counts.bytes[k]) for k in counts.bytes}


def timed(rows: list[Row], repeat: int) -> None:
    """Every row ``repeat`` times, in rounds that run each row once."""
    from tqdm import tqdm

    todo = [row for _ in range(max(1, repeat)) for row in rows]
    for row in tqdm(todo, desc="timed builds", unit="build", file=sys.stderr):
        row.out.unlink(missing_ok=True)
        seconds, peak, text = measure(row.cmd)
        row.seconds.append(seconds)
        match = SUMMARY.search(text)
        row.own_speed.append(float(match.group(1)) if match else 0.0)
        row.own_peak_mb = max(row.own_peak_mb, float(match.group(2)) if match else 0.0)
        row.peak_mb = max(row.peak_mb, peak)
        row.items = dataset_items(row.out)


def print_speed(rows: list[Row], pages: int, workers: int) -> None:
    peer = next((r for r in rows if r.name.startswith("PDF")), None)
    print(f"\n{'build (--workers ' + str(workers) + ')':<26}{'s min':>7}{'s med':>7}"
          f"{'p/s best':>9}{'p/s med':>9}{'own p/s':>9}{'tree RSS MB':>13}{'1 proc MB':>11}"
          f"{'items':>7}"
          f"{'x PDF':>7}")
    for r in rows:
        best, med = min(r.seconds), statistics.median(r.seconds)
        ratio = f"{min(peer.seconds) / best:7.2f}" if peer else f"{'-':>7}"
        print(f"{r.name:<26}{best:7.2f}{med:7.2f}{pages / best:9.1f}{pages / med:9.1f}"
              f"{max(r.own_speed):9.1f}{r.peak_mb:13.0f}{r.own_peak_mb:11.0f}{r.items:7d}{ratio}")
    print("  p/s = pages / wall seconds of the whole command (start-up included), of the "
          "fastest (best) and the median run; own p/s = the best its summary printed (the build "
          "alone); tree RSS = peak of the CLI's process tree, workers included (shared pages "
          "counted in each), 1 proc = the summary's peak of its biggest process; highest of "
          "the runs")


def print_bytes(fetched: dict[str, dict[str, tuple[int, int]]], full: dict[str, int]) -> None:
    kinds = ["manifest", "info.json", "previews", "whole pages again", "regions"]
    names = list(fetched)
    print(f"\n{'bytes fetched (server side)':<28}"
          + "".join(f"{n + ' req':>16}{n + ' MB':>14}" for n in names))
    for kind in kinds:
        cells = [fetched[n].get(kind, (0, 0)) for n in names]
        print(f"{kind:<28}" + "".join(f"{q:>16d}{b / 1e6:>14.2f}" for q, b in cells))
    totals = {n: sum(b for _, b in fetched[n].values()) for n in names}
    print(f"{'total':<28}" + "".join(
        f"{sum(q for q, _ in fetched[n].values()):>16d}{totals[n] / 1e6:>14.2f}" for n in names))
    print(f"{'full-resolution images':<28}" + "".join(
        f"{'':>16}{full[n] / 1e6:>14.2f}" for n in names))
    print(f"{'fetched / full-resolution':<28}" + "".join(
        f"{'':>16}{totals[n] / full[n]:>14.1%}" for n in names)
          + f"   (target <= {TARGET_SHARE:.0%})")


def loadavg() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().strip()


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pages", type=int, default=100)
    p.add_argument("--picture-share", type=float, default=0.3)
    p.add_argument("--repeat", type=int, default=3, help="timed runs per row; min and median")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0, help="where the picture pages fall")
    p.add_argument("--skip-pdf", action="store_true", help="no PDF row (and no x PDF)")
    p.add_argument("--skip-level0", action="store_true", help="no level-0 row")
    p.add_argument("--data", type=Path, default=DATA, help="the shared data set (read only)")
    return p.parse_args()


def main() -> None:
    args = parse_args()
    if missing := iiif_servers.missing_tools():
        raise SystemExit(f"IIPImage needs {missing}: {iiif_servers.APT_COMMAND}")
    os.environ["BORDE_ALLOW_PRIVATE_URLS"] = "1"  # the servers are on 127.0.0.1
    load_before = loadavg()
    byte_compiled()
    with tempfile.TemporaryDirectory(prefix="iiif-bench-") as tmp, ExitStack() as stack:
        tmp = Path(tmp)
        book = make_book(args.data, args.pages, args.picture_share, args.seed, tmp / "pages")
        images = [p for p, _ in book]
        stems = [p.stem for p in images]
        n_pictures = sum(kind == "picture" for _, kind in book)
        docs: dict = {}
        json_base = stack.enter_context(iiif_servers.serve_json(docs))
        servers = {"IIPImage": stack.enter_context(iiif_servers.iipimage(images, tmp))}
        if not args.skip_level0:
            servers["level 0"] = stack.enter_context(iiif_servers.level0(images, tmp))
        rows, fetched, full = [], {}, {}
        for name, base in servers.items():
            key = name.replace(" ", "")
            docs[f"{key}.json"] = iiif_servers.manifest(
                base, stems, manifest_id=f"{json_base}/{key}.json")
            proxy, counts = stack.enter_context(counting_proxy(base, json_base))
            docs[f"{key}-counted.json"] = iiif_servers.manifest(
                proxy, stems, manifest_id=f"{proxy}/{MANIFEST_PREFIX}/{key}-counted.json")
            full[name] = full_resolution_bytes(base, stems)
            fetched[name] = counted(name, f"{proxy}/{MANIFEST_PREFIX}/{key}-counted.json",
                                    tmp / f"{key}-counted.zip", args.workers, counts)
            out = tmp / f"{key}.zip"
            rows.append(Row(f"IIIF {name}", build_cmd(f"{json_base}/{key}.json", out,
                                                      args.workers), out))
        if not args.skip_pdf:
            pdf = tmp / "book.pdf"
            write_pdf(images, pdf)
            settle(pdf)
            rows.append(Row("PDF (same JPEGs)", build_cmd(str(pdf), tmp / "pdf.zip",
                                                          args.workers), tmp / "pdf.zip"))
        timed(rows, args.repeat)
        source_mb = sum(p.stat().st_size for p in images) / 1e6
        pdf_mb = (tmp / "book.pdf").stat().st_size / 1e6 if not args.skip_pdf else 0.0

    print(f"\nbook: {args.pages} pages, {n_pictures} picture pages (figures/moreno) and "
          f"{args.pages - n_pictures} text pages (pages/dta_text), seed {args.seed}; "
          f"{source_mb:.1f} MB of JPEGs" + (f", PDF {pdf_mb:.1f} MB" if pdf_mb else ""))
    print_bytes(fetched, full)
    print_speed(rows, args.pages, args.workers)
    iiif = rows[0]
    pdf_row = next((r for r in rows if r.name.startswith("PDF")), None)
    share = sum(b for _, b in fetched["IIPImage"].values()) / full["IIPImage"]
    verdicts = [f"bytes {share:.1%} of full resolution (<= {TARGET_SHARE:.0%}: "
                f"{'met' if share <= TARGET_SHARE else 'NOT met'})",
                f"peak RSS {iiif.peak_mb:.0f} MB (<= {TARGET_RSS_MB}: "
                f"{'met' if iiif.peak_mb <= TARGET_RSS_MB else 'NOT met'})"]
    if pdf_row:
        ratio = min(pdf_row.seconds) / min(iiif.seconds)
        verdicts.append(f"IIPImage pages/s {ratio:.2f}x the PDF's (>= 1: "
                        f"{'met' if ratio >= 1 else 'NOT met'})")
    print("\ntargets of #64: " + "; ".join(verdicts))
    print(f"load average before: {load_before}; after: {loadavg()} (2 cores, shared)")
    print(f"command: python bench/iiif_bench.py {' '.join(sys.argv[1:])}".rstrip())


if __name__ == "__main__":
    main()
