from __future__ import annotations

import zipfile

import pytest

from tests.e2e.harness import browser, chromium_path, running_app
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf

pytestmark = pytest.mark.e2e


def test_upload_a_scan_and_download_the_dataset(shared_data, tmp_path):
    chromium_path()
    pages = labelled_pages(shared_data)
    ill = chapbook_pages(shared_data)[:3]
    txt = [p for p, label in pages if "dta_text" in str(p)][:3]
    order = [x for pair in zip(ill, txt, strict=True) for x in pair]
    pdf = scans_pdf(tmp_path / "Moda 1890.pdf", order)
    with running_app() as url, browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Archive → Dataset").click()
        page.locator("#archive-upload input[type=file]").set_input_files(str(pdf))
        page.get_by_label("Moda 1890.pdf").first.wait_for(timeout=60_000)
        page.get_by_role("button", name="Build dataset").click()
        page.get_by_text("figure(s) from").first.wait_for(timeout=120_000)
        name = page.get_by_label("Moda_1890_dataset.zip")
        name.wait_for(timeout=30_000)
        link = page.locator("tr", has=name).locator("[data-testid=download-link]")
        histogram = page.locator(".block", has_text="Scores").locator("img")
        assert histogram.count() >= 1
        assert " 0 figure(s)" not in page.get_by_text("figure(s) from").first.inner_text()
        crops = page.locator("#archive-gallery img")
        assert crops.count() >= 3
        page.screenshot(path=str(tmp_path / "archive_tab.png"), full_page=True)
        with page.expect_download() as dl:
            link.click()
        saved = tmp_path / "dataset.zip"
        dl.value.save_as(saved)
    with zipfile.ZipFile(saved) as zf:
        names = zf.namelist()
    assert "manifest.csv" in names and "metadata.jsonl" in names
    assert "regions.csv" in names
    kept = [n for n in names if n.endswith(".jpg")]
    assert kept and all(n.startswith("images/Moda_1890_p") and "_f" in n for n in kept)
