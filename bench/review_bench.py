"""What the curator's review costs, on the bench magazine (bench/magazine.py).

Prints, in one run on the same 300-page file:
  * the build with candidates kept for review (the default) and with --no-candidates:
    seconds and the zip size, so the candidates' extra disk is a share of the zip;
  * ``python -m archive.review``: seconds to write review.html, and its size;
  * ``python -m archive.apply`` with two decisions: seconds, as a whole command;
  * with ``--browser`` (Debian Chromium), the tab itself: upload, build, click two crops,
    then the time from the "Rebuild zip" click to the finished download.

    python bench/review_bench.py [--pages 300] [--browser]
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.magazine import write_magazine_pdf  # noqa: E402


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - t0


def candidates_share(path: Path) -> tuple[int, int]:
    """Bytes of the candidates/ entries, and of the whole zip file."""
    with zipfile.ZipFile(path) as zf:
        extra = sum(i.compress_size for i in zf.infolist() if i.filename.startswith("candidates/"))
    return extra, path.stat().st_size


def two_decisions(dataset: Path, out: Path) -> None:
    """Drop the first kept item and keep the first stored candidate."""
    with zipfile.ZipFile(dataset) as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
    next(r for r in rows if r["kept"] == "1")["decision"] = "drop"
    spare = next((r for r in rows if r["file_name"].startswith("candidates/")), None)
    if spare:
        spare["decision"] = "keep"
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def browser_rebuild(pdf: Path, tmp: Path) -> float:
    """Seconds from the click on "Rebuild zip" to the curated zip saved by the browser."""
    from tests.e2e.harness import browser, build_in_tab, running_app

    with running_app() as url, browser(tmp / "profile") as ctx:
        page = build_in_tab(ctx, url, pdf, upload_ms=120_000, build_ms=900_000)
        tiles = page.locator("#archive-review .thumbnail-item")
        for k in (0, 1):
            tiles.nth(k).click()
            page.wait_for_timeout(500)
        t0 = time.perf_counter()
        page.get_by_role("button", name="Rebuild zip").click()
        page.get_by_text("Rebuilt ").wait_for(timeout=120_000)
        with page.expect_download() as dl:
            page.locator("#archive-download [data-testid=download-link]").first.click()
        dl.value.save_as(tmp / "curated-browser.zip")
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--browser", action="store_true", help="also time the tab in Chromium")
    args = ap.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="review-bench-") as tmp:
        tmp = Path(tmp)
        pdf = tmp / "magazine.pdf"
        write_magazine_pdf(pdf, args.pages)
        with_c, without_c = tmp / "with.zip", tmp / "without.zip"
        s_with = timed([py, "-m", "archive", str(pdf), "-o", str(with_c), "--workers", "2"])
        s_without = timed([py, "-m", "archive", str(pdf), "-o", str(without_c), "--workers",
                           "2", "--no-candidates"])
        extra, total = candidates_share(with_c)
        s_review = timed([py, "-m", "archive.review", str(with_c)])
        html = (tmp / "review.html").stat().st_size
        two_decisions(with_c, tmp / "edited.csv")
        s_apply = timed([py, "-m", "archive.apply", str(with_c), str(tmp / "edited.csv"), "-o",
                         str(tmp / "curated.zip")])
        print(f"bench magazine: {args.pages} pages, {pdf.stat().st_size / 2**20:.0f} MB\n")
        print(f"build, candidates kept      {s_with:7.1f} s   zip {total / 2**20:7.1f} MB")
        print(f"build, --no-candidates      {s_without:7.1f} s   zip "
              f"{without_c.stat().st_size / 2**20:7.1f} MB")
        print(f"candidates' extra disk      {extra / 2**20:7.1f} MB = {extra / total:.1%} of "
              f"the zip ({(total - without_c.stat().st_size) / without_c.stat().st_size:+.1%} "
              "against --no-candidates)")
        print(f"python -m archive.review    {s_review:7.1f} s   review.html {html / 2**20:.1f} MB")
        print(f"python -m archive.apply     {s_apply:7.1f} s   (two decisions, whole command)")
        if args.browser:
            print(f"tab: Rebuild zip -> download {browser_rebuild(pdf, tmp):6.1f} s")


if __name__ == "__main__":
    main()
