"""The Archive tab's IIIF box (issue #64 item 6) in a real Chromium: a manifest's address
shows the book (title, pages, first thumbnails) before the build, Build makes the dataset
from the library's server with no upload, and a refused address is one sentence in the
page's language, said again after a switch. One app that may fetch from 127.0.0.1."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests import iiif_servers
from tests.e2e.harness import browser, chromium_path, running_app, shots_dir, switch_language
from ui_text import say

pytestmark = pytest.mark.e2e
DESKTOP, PHONE = (1366, 800), (390, 844)
TAB = {"es": "Archivo → Dataset", "en": "Archive → Dataset"}
TITLE = "Grabados de un incunable"
PAGES = 4  # two engravings, a text page and a decorated one: cheap to build
BOX = "#archive-manifest :is(input, textarea)"
# every thumbnail of the book has loaded and has pixels
SHOWN = """() => { const imgs = [...document.querySelectorAll('#archive-book-pages img')];
    return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0)
        && imgs.length; }"""


@pytest.fixture(scope="module")
def manifest_url(shared_data, tmp_path_factory):
    """A level-0 IIIF image server and the book's manifest, on 127.0.0.1."""
    images = sorted((shared_data / "figures" / "early" / "images")
                    .glob("bpt6k15223596_*.jpg"))[:PAGES]
    docs: dict = {}
    with iiif_servers.level0(images, tmp_path_factory.mktemp("iiif"), "3") as images_base, \
            iiif_servers.serve_json(docs) as base:
        url = f"{base}/incunable/manifest.json"
        docs["incunable/manifest.json"] = iiif_servers.manifest(
            images_base, [p.stem for p in images], "3", title=TITLE, manifest_id=url)
        yield url


@pytest.fixture(scope="module")
def iiif_app():
    chromium_path()  # skip (or fail in CI) before paying for the app start
    with running_app({"BORDE_ALLOW_PRIVATE_URLS": "1"}) as url:
        yield url


def _tab(ctx, url: str, lang: str):
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("tab", name=TAB[lang]).click()
    return page


def _shots(page, folder, lang: str) -> None:
    """The box, the book line and its thumbnails in view, desktop then phone."""
    for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.locator("#archive-manifest").evaluate("e => e.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        page.screenshot(path=str(folder / f"{lang}_{name}_manifest.png"))


def test_the_book_before_the_build_then_its_dataset(iiif_app, manifest_url, tmp_path):
    with browser(tmp_path / "profile", locale="en-US", viewport=DESKTOP) as ctx:
        page = _tab(ctx, iiif_app, "en")
        page.locator("#archive-manifest").scroll_into_view_if_needed()
        page.screenshot(path=str(shots_dir(tmp_path) / "en_desktop_before.png"))
        page.locator(BOX).fill(manifest_url)
        page.get_by_role("button", name="Show book").click()
        line = page.locator("#archive-book", has_text=TITLE)
        line.wait_for(timeout=60_000)
        shown = page.wait_for_function(SHOWN, timeout=30_000).json_value()
        said = line.inner_text().strip()
        _shots(page, shots_dir(tmp_path), "en")
        page.set_viewport_size({"width": DESKTOP[0], "height": DESKTOP[1]})
        page.locator("#archive-run").click()
        page.locator("#archive-status .borde-done").wait_for(timeout=180_000)
        status = page.locator("#archive-status").inner_text()
        link = page.locator("#archive-download [data-testid=download-link]").first
        with page.expect_download() as dl:
            link.click()
        saved = tmp_path / "dataset.zip"
        dl.value.save_as(saved)
        zip_name = dl.value.suggested_filename
    assert said == say("en", "archive_book", title=TITLE, pages=PAGES), said
    assert shown == PAGES
    assert status.startswith(f"Done: {PAGES} page(s) read, "), status
    assert zip_name == "incunable_dataset.zip"
    with zipfile.ZipFile(saved) as zf:
        rows = [json.loads(r) for r in zf.read("metadata.jsonl").splitlines()]
    assert rows and all(r["origin"]["title"] == TITLE for r in rows), rows


def test_spanish_refusal_then_the_book_said_again_in_english(iiif_app, manifest_url, tmp_path):
    """An ftp address (refused everywhere, whatever the setting): one Spanish sentence. Then
    the book, by Enter as a phone keyboard's Go, and its line in English after a switch."""
    with browser(tmp_path / "profile", locale="es-ES", viewport=PHONE) as ctx:
        page = _tab(ctx, iiif_app, "es")
        box = page.locator(BOX)
        box.fill("ftp://biblioteca.example.org/libro/manifest.json")
        box.press("Enter")
        error = page.locator("#archive-book .borde-error")
        error.wait_for(timeout=30_000)
        refused = error.inner_text().strip()
        page.locator("#archive-manifest").evaluate("e => e.scrollIntoView({block: 'start'})")
        page.screenshot(path=str(shots_dir(tmp_path) / "es_phone_refused.png"))
        box.fill(manifest_url)
        box.press("Enter")
        page.locator("#archive-book .borde-note").wait_for(timeout=60_000)
        page.wait_for_function(SHOWN, timeout=30_000)
        spanish = page.locator("#archive-book").inner_text().strip()
        pages_label = page.locator("#archive-book-pages").inner_text()
        _shots(page, shots_dir(tmp_path), "es")
        switch_language(page, "English")
        english = page.locator("#archive-book", has_text="page(s)")
        english.wait_for(timeout=30_000)
        again = english.inner_text().strip()
    assert refused == say("es", "archive_error_url_scheme", scheme="ftp"), refused
    assert spanish == say("es", "archive_book", title=TITLE, pages=PAGES), spanish
    assert say("es", "archive_book_pages") in pages_label, pages_label
    assert again == say("en", "archive_book", title=TITLE, pages=PAGES), again
