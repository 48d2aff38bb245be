"""The app refuses an upload over its size limit and says what the limit is."""

from __future__ import annotations

import pytest

from tests.e2e.harness import running_app

pytestmark = pytest.mark.e2e


def test_upload_over_the_limit_is_refused_with_the_limit_named(shared_data, tmp_path):
    from gradio_client import Client, handle_file

    big = tmp_path / "scan.pdf"
    big.write_bytes((shared_data / "pdfs" / "linn.pdf").read_bytes() * 4)
    assert big.stat().st_size > 100 * 1024
    with running_app({"BORDE_MAX_UPLOAD": "100kb"}) as url:
        client = Client(url, verbose=False)
        with pytest.raises(Exception, match="maximum file size of 102400 bytes"):
            client.predict([handle_file(str(big))], [], "figure", "figures", "", "512", "",
                           False, "{page}", "", 24, api_name="/archive_run")
        page = client.view_api(return_format="dict", print_info=False)
        assert "/archive_run" in page["named_endpoints"]


def test_the_browser_says_the_limit_in_spanish(shared_data, tmp_path):
    """gradio's own "File(s) exceed the maximum allowed size" reads Spanish (app.js)."""
    from tests.e2e.harness import browser, chromium_path, page_text

    chromium_path()
    big = tmp_path / "libro.pdf"
    big.write_bytes((shared_data / "pdfs" / "linn.pdf").read_bytes() * 4)
    with running_app({"BORDE_MAX_UPLOAD": "100kb"}) as url, \
            browser(tmp_path / "profile", locale="es-ES") as ctx:
        page = ctx.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Archivo → Dataset").click()
        page.locator("#archive-upload input[type=file]").set_input_files(str(big))
        page.get_by_text("Archivo demasiado grande").first.wait_for(timeout=30_000)
        text = page_text(page)
        assert "libro.pdf" in text and "exceed" not in text
