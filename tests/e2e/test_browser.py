from __future__ import annotations

import pytest

from tests.e2e.harness import browser, chromium_path, running_app

pytestmark = pytest.mark.e2e

TABS_EN = ["Vet Scanner", "Archive → Dataset", "Imperial LoRA"]


@pytest.fixture(scope="module")
def app_url():
    chromium_path()  # skip (or fail in CI) before paying for the app start
    with running_app() as url:
        yield url


def test_three_tabs_and_language_switch(app_url, tmp_path):
    with browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        for name in TABS_EN:
            page.get_by_role("tab", name=name).wait_for(timeout=60_000)
        page.screenshot(path=str(tmp_path / "tabs_en.png"), full_page=True)

        page.get_by_role("tab", name="Archive → Dataset").click()
        page.get_by_role("heading", name="Archive → Dataset").wait_for()

        # Gradio's own settings panel switches the UI language in place.
        page.get_by_text("Settings").first.click()
        page.get_by_role("combobox", name="Language").click()
        page.get_by_role("option", name="Español").click()
        page.locator("[role=dialog] button").first.click()  # the panel's close (x) button
        page.get_by_role("heading", name="Archivo → Dataset").wait_for(timeout=10_000)
        page.screenshot(path=str(tmp_path / "tabs_es.png"), full_page=True)
        page.get_by_role("tab", name="Escáner veterinario").click()
        page.get_by_role("heading", name="Escáner veterinario").wait_for(timeout=10_000)
        assert page.get_by_role("heading", name="Vet Scanner").count() == 0
    assert (tmp_path / "tabs_en.png").stat().st_size > 10_000
    assert (tmp_path / "tabs_es.png").stat().st_size > 10_000
