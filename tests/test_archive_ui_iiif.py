"""The Archive tab's IIIF box (issue #64 item 6): the book shown before the build, the build
from a manifest with no upload, and every refusal as one sentence in the page's language.
Real servers on 127.0.0.1 (tests/iiif_servers.py): nothing of HTTP is mocked."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from archive.iiif import http
from tests import iiif_servers
from ui_text import say

TITLE = "Grabados de prueba"
PAGES = 4  # a cheap book
CAPTION = "an engraving from {source}, page {page}"


@pytest.fixture(autouse=True)
def fresh_fetcher(monkeypatch):
    """The process's shared fetcher reads BORDE_ALLOW_PRIVATE_URLS when it is made: each
    test gets its own, made under its own environment."""
    monkeypatch.setattr(http, "_shared", None)
    yield
    if http._shared is not None:
        http._shared.close()


@pytest.fixture(scope="module")
def images(shared_data) -> list[Path]:
    """Four pages of one early book: two engravings, a text page, a decorated one."""
    folder = shared_data / "figures" / "early" / "images"
    return sorted(folder.glob("bpt6k15223596_*.jpg"))[:PAGES]


@pytest.fixture(scope="module")
def library(images, tmp_path_factory):
    """A level-0 image server and a JSON server with a book, a two-book collection and a
    JSON that is not a manifest; yields the JSON server's base URL."""
    work = tmp_path_factory.mktemp("iiif")
    stems = [p.stem for p in images]
    with iiif_servers.level0(images, work, "3") as images_base:
        docs: dict = {"other.json": {"hello": "world", "items": []}}
        with iiif_servers.serve_json(docs) as base:
            docs["book/manifest.json"] = iiif_servers.manifest(
                images_base, stems, "3", title=TITLE, manifest_id=f"{base}/book/manifest.json")
            docs["second/manifest.json"] = iiif_servers.manifest(
                images_base, stems[:2], "2", title="Segundo libro",
                manifest_id=f"{base}/second/manifest.json")
            docs["both.json"] = iiif_servers.collection(
                f"{base}/both.json", [(f"{base}/book/manifest.json", TITLE),
                                      (f"{base}/second/manifest.json", "Segundo libro")])
            yield base


def _run(manifest: str, lang: str, uploads=None) -> list[tuple]:
    from tabs.archive import archive_run

    return list(archive_run(uploads, [], "figure", "figures", "", "512", "", False, CAPTION,
                            "", 48, False, manifest, lang))


def test_the_book_is_shown_before_the_build_and_said_again_in_english(library, monkeypatch):
    from tabs import archive as tab

    monkeypatch.setenv(http.ALLOW_PRIVATE_ENV, "1")
    line, pages, said = tab.archive_look(f"  {library}/book/manifest.json \n", "es")
    assert line == f'<p class="borde-note">“{TITLE}”: {PAGES} página(s).</p>', line
    assert pages["visible"] and len(pages["value"]) == PAGES
    for f in pages["value"]:
        with Image.open(f) as img:
            assert img.format == "JPEG" and img.width == 160 and img.height > 200
    assert tab.archive_book_relang(said, "en") == (
        f'<p class="borde-note">“{TITLE}”: {PAGES} page(s).</p>')
    line, pages, said = tab.archive_look(f"{library}/both.json", "en")
    assert say("en", "archive_books", books=2, pages=PAGES + 2, title=TITLE) in line
    monkeypatch.setattr(tab, "MAX_PAGES", 3)  # more pages than a job may have: said now
    line, _, said = tab.archive_look(f"{library}/book/manifest.json", "es")
    assert 'class="borde-error"' in line and "más de las 3 permitidas" in line, line
    empty = tab.archive_look("   ", "es")
    assert empty[0] == "" and not empty[1]["visible"] and empty[2] is None


def test_build_from_a_manifest_with_no_upload(library, monkeypatch):
    """Progress counts the book's pages; the zip's rows say which book they came from."""
    monkeypatch.setenv(http.ALLOW_PRIVATE_ENV, "1")
    outs = _run(f"{library}/book/manifest.json", "es")
    status, zip_path = outs[-1][0], outs[-1][3]
    assert "Leyendo el manifiesto" in outs[0][0]
    assert any(f"de {PAGES} ·" in o[0] for o in outs[1:-1]), [o[0] for o in outs]
    assert say("es", "archive_done_figures").split(":")[0] in status, status
    assert f"{PAGES} página(s) leídas" in status, status
    assert Path(zip_path).name == "book_dataset.zip"
    with zipfile.ZipFile(zip_path) as zf:
        rows = [json.loads(line) for line in zf.read("metadata.jsonl").splitlines()]
    assert rows and all(r["origin"]["title"] == TITLE for r in rows)
    assert all(r["origin"]["manifest"] == f"{library}/book/manifest.json" for r in rows)


def test_a_private_address_is_refused_in_spanish_without_the_setting(library, monkeypatch):
    from tabs.archive import archive_look

    monkeypatch.delenv(http.ALLOW_PRIVATE_ENV, raising=False)
    url = f"{library}/book/manifest.json"
    refused = say("es", "archive_error_url_private", host="127.0.0.1")
    line, pages, said = archive_look(url, "es")
    assert line == f'<p class="borde-error">{refused}</p>' and not pages["visible"]
    status = _run(url, "es")[-1][0]
    assert say("es", "archive_failed", detail=refused) in status, status
    assert "private" not in status and "/book" not in status


@pytest.mark.parametrize("address, key, fields", [
    ("el libro de grabados", "archive_error_url_malformed", {}),
    ("/etc/passwd.json", "archive_error_url_malformed", {}),  # a server path is never read
    ("ftp://example.org/manifest.json", "archive_error_url_scheme", {"scheme": "ftp"}),
])
def test_an_address_that_is_no_web_address_is_one_spanish_sentence(address, key, fields):
    from tabs.archive import archive_look

    line, pages, said = archive_look(address, "es")
    assert line == f'<p class="borde-error">{say("es", key, **fields)}</p>', line
    assert said == {"cls": "error", "said": [(key, fields)]}
    status = _run(address, "es")[-1][0]  # the build refuses it before it starts
    assert status == f'<p class="borde-error">{say("es", key, **fields)}</p>', status


def test_json_that_is_not_a_manifest(library, monkeypatch):
    from tabs.archive import archive_look

    monkeypatch.setenv(http.ALLOW_PRIVATE_ENV, "1")
    line, _, _ = archive_look(f"{library}/other.json", "es")
    assert say("es", "archive_error_not_manifest", name="other.json") in line, line
    line, _, _ = archive_look(f"{library}/missing/manifest.json", "en")
    assert say("en", "archive_error_url_status", host="127.0.0.1", status=404) in line, line
