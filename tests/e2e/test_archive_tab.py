from __future__ import annotations

import re
import zipfile

import pytest

from archive.apply import read_dataset
from archive.review import by_doubt
from tests.e2e.harness import browser, build_in_tab, shots_dir
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf
from tests.zips import kept_by_key, region_rows

pytestmark = pytest.mark.e2e
# gradio's own progress overlays (timers, bars) that a user can see
GRADIO_OVERLAYS = """() => [...document.querySelectorAll('[data-testid=status-tracker]')]
    .filter(t => !t.classList.contains('hide') && getComputedStyle(t).opacity !== '0'
                 && t.innerText.trim()).length"""
# every image the selector finds has loaded and has pixels
SHOWN = """sel => [...document.querySelectorAll(sel)]
    .every(i => i.complete && i.naturalWidth > 0)"""


def test_upload_a_scan_and_download_the_dataset(app_url, shared_data, tmp_path):
    pages = labelled_pages(shared_data)
    ill = chapbook_pages(shared_data)[:3]
    txt = [p for p, label in pages if "dta_text" in str(p)][:3]
    order = [x for pair in zip(ill, txt, strict=True) for x in pair]
    pdf = scans_pdf(tmp_path / "Moda 1890.pdf", order)
    with browser(tmp_path / "profile") as ctx:
        page = build_in_tab(ctx, app_url, pdf)
        name = page.get_by_label("Moda_1890_dataset.zip")
        name.wait_for(timeout=30_000)
        link = page.locator("tr", has=name).locator("[data-testid=download-link]")
        histogram = page.locator("#archive-hist img")
        assert histogram.count() >= 1
        status = page.locator("#archive-status").inner_text()
        assert re.match(r"Done: 6 page\(s\) read, [1-9]\d* figure\(s\) kept from \d+ page\(s\), "
                        r"\d+ duplicate\(s\) dropped, in [\d.]+ s", status), status
        assert "/tmp" not in status and ".zip" not in status and "RSS" not in status  # no paths
        crops = page.locator("#archive-gallery img")
        assert crops.count() >= 3
        # every caption whole: the page, the index and the score
        captions = page.locator("#archive-gallery .caption-label").all_inner_texts()
        assert captions and all(re.fullmatch(r"p\. \d+ #\d+ · [01]\.\d\d", c) for c in captions)
        fit = page.locator("#archive-gallery img").first.evaluate(
            "i => getComputedStyle(i).objectFit")
        assert fit == "contain"  # thumbnails are not cropped
        # every thumbnail shows its picture (not a broken-image icon with its alt text)
        page.wait_for_function(SHOWN, arg="#archive-gallery img", timeout=20_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "en_archive_built.png"), full_page=True)
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


def test_one_progress_display_then_review_two_crops_and_the_rebuild_says_so(
        app_url, shared_data, tmp_path):
    """Toggle the two most doubtful crops, rebuild: the zip has exactly those two changes,
    the message says what changed, and regions.csv says the curator decided."""
    pages = chapbook_pages(shared_data)[:10]
    pdf = scans_pdf(tmp_path / "Pliego.pdf", [*pages, *pages, pages[0]])
    with browser(tmp_path / "profile", locale="es-ES") as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name="Archivo → Dataset").click()
        # before any build: a sentence by the button, and no red badge on the zip box
        page.get_by_role("button", name="Rehacer zip").click()
        page.get_by_text("Cree primero un dataset").wait_for(timeout=30_000)
        assert page.locator("#archive-download .error").count() == 0
        page.locator("#archive-upload input[type=file]").set_input_files(str(pdf))
        page.get_by_label(pdf.name).first.wait_for(timeout=60_000)
        page.get_by_role("button", name="Crear dataset").click()
        displays = []  # (our progress bars, gradio's visible progress overlays)
        while not page.locator("#archive-status .borde-done").count():
            displays.append((page.locator("progress").count(), page.evaluate(GRADIO_OVERLAYS)))
            page.wait_for_timeout(100)
        assert displays and all(gradio == 0 for _, gradio in displays), displays
        assert max(ours for ours, _ in displays) == 1
        assert page.locator("#archive-status").inner_text().startswith("Hecho: 21 página(s)")
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
        page.get_by_role("button", name="Rehacer zip").click()
        confirmation = page.locator("#archive-review-status", has_text="Rehecho")
        confirmation.wait_for(timeout=60_000)
        said = confirmation.inner_text()
        assert said.startswith("Rehecho Pliego_dataset_curated.zip: ") and "tenía" in said
        page.wait_for_function(SHOWN, arg="#archive-review img, #archive-gallery img",
                               timeout=20_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "es_archive_rebuilt.png"), full_page=True)
        assert page.locator("#archive-download .error").count() == 0
        link = page.locator("#archive-download [data-testid=download-link]").first
        with page.expect_download() as second:
            link.click()
        curated = tmp_path / "curated.zip"
        second.value.save_as(curated)
        # decisions made elsewhere (review.html's export): a file that drops one more crop
        # and its copies (a dropped original's copy would otherwise take its place)
        data = read_dataset(built)
        extra = next(r for r in by_doubt(data.regions, data.threshold)[2:]
                     if r.kept and not r.reason)
        gone = [extra, *(r for r in data.regions if r.reason == f"duplicate of {extra.file_name}")]
        choice = tmp_path / "decisiones.csv"
        choice.write_text("source,page,index,decision\n" + "".join(
            f"{r.source},{r.page},{r.index},drop\n" for r in gone), encoding="utf-8")
        page.locator("#archive-decisions input[type=file]").set_input_files(str(choice))
        page.locator("#archive-review-status",
                     has_text=f"Se tomaron {len(gone)} decisión(es) de decisiones.csv").wait_for(
            timeout=30_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "es_archive_decisions.png"),
                        full_page=True)
        page.get_by_role("button", name="Rehacer zip").click()
        confirmation.wait_for(timeout=60_000)
        with page.expect_download() as third:
            link.click()
        from_file = tmp_path / "from_file.zip"
        third.value.save_as(from_file)
    toggled = {f"{r.page}#{r.index}" for r in by_doubt(data.regions, data.threshold)[:2]}
    then, dropped = kept_by_key(from_file), {f"{r.page}#{r.index}" for r in gone}
    assert not any(then[k] for k in dropped)
    assert {k for k in then if then[k] != kept_by_key(curated)[k]} == {
        k for k in dropped if kept_by_key(curated)[k]}
    before, after = kept_by_key(built), kept_by_key(curated)
    assert {k for k in before if before[k] != after[k]} == toggled
    added = sum(after[k] and not before[k] for k in toggled)
    assert f"{added} recorte(s) añadidos y {2 - added} quitados" in said
    reasons = {f"{r['page']}#{r['index']}": r["reason"] for r in region_rows(curated)}
    for key in toggled:
        assert reasons[key] == ("kept_by_curator" if after[key] else "dropped_by_curator")
