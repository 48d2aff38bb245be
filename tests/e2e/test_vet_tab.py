from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.harness import browser, chromium_path, running_app

pytestmark = pytest.mark.e2e


def test_photo_triage_in_two_languages_and_a_herd(shared_data, tmp_path):
    chromium_path()
    cond = shared_data / "livestock" / "conditions"
    photo = next((cond / "pinkeye").glob("*.jpg"))
    examples = Path(__file__).resolve().parents[2] / "vet" / "examples"
    herd = [examples / "healthy_cow.jpg", next((cond / "mastitis").glob("*.jpg")),
            examples / "fmd_cow_mouth.jpg"]
    page_scan = next((shared_data / "pages" / "dta_text").glob("*.png"))
    with running_app() as url, browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Vet Scanner").click()
        # The shipped examples are offered (a Space has no shared data).
        assert page.get_by_text("Example photos").filter(visible=True).count() >= 1
        page.locator("#vet-photo input[type=file]").set_input_files(str(photo))
        page.get_by_role("button", name="Check this animal").click()
        page.get_by_text("not a diagnosis").first.wait_for(timeout=120_000)
        assert page.get_by_text("Where the model looked").count() >= 1
        page.screenshot(path=str(tmp_path / "vet_en.png"), full_page=True)

        page.get_by_label("Español").check()
        page.get_by_role("button", name="Check this animal").click()
        page.get_by_text("no es un diagnóstico").first.wait_for(timeout=120_000)

        page.get_by_role("tab", name="Herd (many photos)").click()
        herd_input = page.locator("#vet-herd input[type=file]")
        herd_input.set_input_files([*map(str, herd), str(page_scan)])
        page.get_by_role("button", name="Check the herd").click()
        page.get_by_text("No es ganado").filter(visible=True).first.wait_for(timeout=120_000)
        assert page.get_by_text(page_scan.name).filter(visible=True).count() >= 1
        # The FMD photo is flagged first, in a red banner in both languages.
        alert = page.locator("#vet-herd-alert")
        assert "fmd_cow_mouth.jpg" in alert.inner_text()
        assert "veterinario oficial" in alert.inner_text()
        assert "official veterinarian" in alert.inner_text()
        assert page.get_by_text("por qué incierto").filter(visible=True).count() >= 1
        text = page.locator("#vet-herd-table").inner_text()
        assert text.index("fmd_cow_mouth.jpg") < text.index("healthy_cow.jpg"), text
        page.screenshot(path=str(tmp_path / "vet_herd.png"), full_page=True)
