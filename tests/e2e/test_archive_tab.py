from __future__ import annotations

import zipfile

import pytest

from archive.apply import read_dataset
from archive.review import by_doubt
from tests.e2e.harness import browser, build_in_tab, chromium_path, running_app
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf
from tests.zips import kept_by_key

pytestmark = pytest.mark.e2e


def test_upload_a_scan_and_download_the_dataset(shared_data, tmp_path):
    chromium_path()
    pages = labelled_pages(shared_data)
    ill = chapbook_pages(shared_data)[:3]
    txt = [p for p, label in pages if "dta_text" in str(p)][:3]
    order = [x for pair in zip(ill, txt, strict=True) for x in pair]
    pdf = scans_pdf(tmp_path / "Moda 1890.pdf", order)
    with running_app() as url, browser(tmp_path / "profile") as ctx:
        page = build_in_tab(ctx, url, pdf)
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
    kept = [n for n in names if n.startswith("images/") and n.endswith(".jpg")]
    assert kept and all(n.startswith("images/Moda_1890_p") and "_f" in n for n in kept)


def test_review_two_crops_rebuild_and_download(shared_data, tmp_path):
    """Toggle the two most doubtful crops, rebuild: the zip has exactly those two changes."""
    chromium_path()
    pages = chapbook_pages(shared_data)[:4]
    pdf = scans_pdf(tmp_path / "Pliego.pdf", [*pages, pages[0]])
    with running_app() as url, browser(tmp_path / "profile") as ctx:
        page = build_in_tab(ctx, url, pdf)
        tiles = page.locator("#archive-review .thumbnail-item")
        tiles.first.wait_for(timeout=30_000)
        with page.expect_download() as first:
            page.locator("#archive-download [data-testid=download-link]").first.click()
        built = tmp_path / "built.zip"
        first.value.save_as(built)
        for k in (0, 1):
            before = tiles.nth(k).inner_text()
            tiles.nth(k).click()
            page.wait_for_function(
                "([k, t]) => document.querySelectorAll('#archive-review .thumbnail-item')[k]"
                ".innerText !== t", arg=[k, before], timeout=30_000)
        page.get_by_role("button", name="Rebuild zip").click()
        page.get_by_text("Rebuilt Pliego_dataset_curated.zip").wait_for(timeout=60_000)
        link = page.locator("#archive-download [data-testid=download-link]").first
        with page.expect_download() as second:
            link.click()
        curated = tmp_path / "curated.zip"
        second.value.save_as(curated)
    data = read_dataset(built)
    toggled = {f"{r.page}#{r.index}" for r in by_doubt(data.regions, data.threshold)[:2]}
    before, after = kept_by_key(built), kept_by_key(curated)
    assert {k for k in before if before[k] != after[k]} == toggled
