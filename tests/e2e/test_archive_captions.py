"""The Archive tab with a text-layer scan and the captioner box ticked: captions in the zip."""

from __future__ import annotations

import json
import zipfile

import pytest

from tests.e2e.harness import browser, chromium_path, running_app
from tests.pdf_factory import chapbook_lines, chapbook_pages, text_layer_pdf
from tests.tiny_models import build_captioner

pytestmark = pytest.mark.e2e


def test_captioner_box_writes_model_and_printed_captions(shared_data, tmp_path):
    chromium_path()
    pdf = text_layer_pdf(tmp_path / "Pliego.pdf", chapbook_pages(shared_data)[5:8],
                         chapbook_lines(shared_data))
    model = build_captioner(tmp_path / "tiny-captioner")
    with running_app({"BORDE_CAPTIONER": str(model)}) as url, \
            browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Archive → Dataset").click()
        box = page.get_by_label("Describe each crop with a captioning model")
        assert not box.is_checked()  # off by default
        assert page.get_by_text(str(model)).count() >= 1  # the model is named
        page.locator("#archive-upload input[type=file]").set_input_files(str(pdf))
        page.get_by_label(pdf.name).first.wait_for(timeout=60_000)
        box.check()
        page.get_by_role("button", name="Build dataset").click()
        page.get_by_text("captioned").first.wait_for(timeout=180_000)
        tiles = page.locator("#archive-review .thumbnail-item")
        tiles.first.wait_for(timeout=30_000)
        assert "EL VALIENTE" in page.locator("#archive-review").inner_text()
        page.screenshot(path=str(tmp_path / "archive_captions.png"), full_page=True)
        with page.expect_download() as dl:
            page.locator("#archive-download [data-testid=download-link]").first.click()
        saved = tmp_path / "dataset.zip"
        dl.value.save_as(saved)
    with zipfile.ZipFile(saved) as zf:
        rows = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
    assert rows and all(r["model_caption"] for r in rows)
    assert any(r["printed_text"] == "EL VALIENTE" and r["text"].endswith(", EL VALIENTE")
               for r in rows)
