from __future__ import annotations

import pytest

from tests.e2e.harness import browser, chromium_path, running_app

pytestmark = pytest.mark.e2e


def assert_output_only(results) -> None:
    """The results gallery shows images; it offers no upload ("Drop media here")."""
    assert results.count() >= 1
    assert results.locator("input[type=file]").count() == 0
    assert "drop" not in results.first.inner_text().lower()


def test_generate_on_the_tiny_sdxl_and_see_settings(tiny_sdxl_dir, tmp_path):
    chromium_path()
    env = {"LORA_BASE_MODEL": str(tiny_sdxl_dir), "LORA_WEIGHTS": ""}
    with running_app(env) as url, browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Imperial LoRA").click()
        page.get_by_text(str(tiny_sdxl_dir)).first.wait_for(timeout=30_000)
        results = page.locator(".block", has_text="Results")
        assert_output_only(results)
        page.get_by_label("Steps").first.fill("2")
        page.get_by_label("Seed (-1 = random)").fill("1234")
        page.get_by_role("button", name="Generate").click()
        page.get_by_text("1234").last.wait_for(timeout=120_000)
        shots = results.locator("img")
        assert shots.count() >= 1
        assert_output_only(results)
        page.screenshot(path=str(tmp_path / "lora_tab.png"), full_page=True)


def test_missing_base_is_said_plainly(tmp_path):
    chromium_path()
    env = {"LORA_BASE_MODEL": str(tmp_path / "no-such-sdxl")}
    with running_app(env) as url, browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(url)
        page.get_by_role("tab", name="Imperial LoRA").click()
        page.get_by_text("The base model is missing").first.wait_for(timeout=30_000)
        page.get_by_role("button", name="Generate").click()
        page.get_by_text("LORA_BASE_MODEL").last.wait_for(timeout=60_000)
