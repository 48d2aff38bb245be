"""review.html in a real browser with the network off: untick a crop, export, apply."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import archive
from tests.e2e.harness import browser, chromium_path
from tests.pdf_factory import chapbook_pages, scans_pdf
from tests.zips import kept_by_key

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def test_review_html_offline_export_then_apply(shared_data, tmp_path):
    chromium_path()
    pdf = scans_pdf(tmp_path / "pliego.pdf", chapbook_pages(shared_data)[:3])
    dataset = tmp_path / "ds.zip"
    archive.build_dataset([pdf], dataset, size=128)
    proc = subprocess.run([sys.executable, "-m", "archive.review", str(dataset)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with browser(tmp_path / "profile") as ctx:
        ctx.set_offline(True)
        page = ctx.new_page()
        page.goto((tmp_path / "review.html").as_uri())
        cards = page.locator(".card")
        assert 3 <= cards.count() <= len(kept_by_key(dataset))
        key = page.locator(".card.kept").first.get_attribute("data-key")
        target = page.locator(f'.card[data-key="{key}"]')
        target.locator("input").uncheck()
        assert "dropped" in (target.get_attribute("class") or "")
        with page.expect_download() as dl:
            page.click("#export")
        dl.value.save_as(tmp_path / "regions.csv")
    out = tmp_path / "curated.zip"
    proc = subprocess.run([sys.executable, "-m", "archive.apply", str(dataset),
                           str(tmp_path / "regions.csv"), "-o", str(out)], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    before, after = kept_by_key(dataset), kept_by_key(out)
    source, page_no, index = key.split("|")
    assert {k for k in before if before[k] != after[k]} == {f"{page_no}#{index}"}
