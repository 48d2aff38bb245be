from __future__ import annotations

import shutil

import pytest

from tests.e2e.harness import browser, chromium_path, running_app, shots_dir
from tests.tiny_models import build_sdxl_lora

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def app_url(tiny_sdxl_dir):
    chromium_path()  # skip (or fail in CI) before paying for the app start
    with running_app({"LORA_BASE_MODEL": str(tiny_sdxl_dir), "LORA_WEIGHTS": ""}) as url:
        yield url


def assert_output_only(results) -> None:
    """The results gallery shows images; it offers no upload ("Drop media here")."""
    assert results.count() >= 1
    assert results.locator("input[type=file]").count() == 0
    assert "drop" not in results.first.inner_text().lower()


def test_generate_on_the_tiny_sdxl_and_see_settings(app_url, tiny_sdxl_dir, tmp_path):
    with browser(tmp_path / "profile") as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name="Imperial LoRA").click()
        page.get_by_text(str(tiny_sdxl_dir)).first.wait_for(timeout=30_000)
        assert "Style LoRA: none loaded" in page.locator("#lora-style").inner_text()
        results = page.locator("#lora-gallery")
        results.wait_for(timeout=30_000)
        assert_output_only(results)
        page.get_by_label("Steps").first.fill("2")
        page.get_by_label("Seed (-1 = random)").fill("1234")
        page.get_by_role("button", name="Generate").click()
        page.get_by_text("1234").last.wait_for(timeout=120_000)
        shots = results.locator("img")
        assert shots.count() >= 1
        assert_output_only(results)
        assert "seed 1234 · 2 steps" in results.inner_text()
        page.screenshot(path=str(tmp_path / "lora_tab.png"), full_page=True)


def test_a_wrong_file_is_refused_plainly_and_a_kohya_lora_is_used(app_url, tiny_sdxl_dir,
                                                                 tmp_path):
    _, kohya = build_sdxl_lora(tiny_sdxl_dir, tmp_path / "style")
    junk = tmp_path / "not_a_lora.safetensors"
    junk.write_bytes(b"this is a text file, not tensors")
    model = tmp_path / "whole_unet.safetensors"
    shutil.copy(tiny_sdxl_dir / "unet" / "diffusion_pytorch_model.safetensors", model)
    with browser(tmp_path / "profile", locale="es-ES") as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name="LoRA imperial").click()
        note = page.locator("#lora-style-note")
        for wrong, said in ((junk, "no es un archivo safetensors"),
                            (model, "no contiene pesos LoRA")):
            page.locator("#lora-style-file input[type=file]").set_input_files(str(wrong))
            page.locator("#lora-style-note", has_text=said).wait_for(timeout=30_000)
            text = note.inner_text()
            assert text.startswith("⚠ Este archivo") and text.endswith(".")  # one sentence
            assert len(text.splitlines()) == 1 and "Traceback" not in text and "header" not in text
            assert page.locator("#lora-style-file").get_by_label(wrong.name).count() == 0
        page.screenshot(path=str(shots_dir(tmp_path) / "es_lora_wrong_file.png"), full_page=True)
        # a Hub id that cannot be reached: one sentence under Generate, no red badge anywhere
        page.get_by_label("Pasos").first.fill("2")
        page.locator("#lora-style-hub textarea, #lora-style-hub input").first.fill(
            "nobody/no-such-style")
        page.get_by_role("button", name="Generar").click()
        page.locator("#lora-message", has_text="no se encuentra el LoRA de estilo").wait_for(
            timeout=60_000)
        assert page.locator("#lora-gallery .error, #lora-message .error").count() == 0
        assert "Errno" not in page.locator("#lora-message").inner_text()
        page.locator("#lora-style-hub textarea, #lora-style-hub input").first.fill("")
        page.locator("#lora-style-file input[type=file]").set_input_files(str(kohya))
        page.locator("#lora-style", has_text="formato kohya").wait_for(timeout=30_000)
        assert note.inner_text().strip() == ""
        page.get_by_role("button", name="Generar").click()
        page.get_by_text("LoRA lora_kohya.safetensors").last.wait_for(timeout=120_000)
        assert page.locator("#lora-message").inner_text().strip() == ""
        page.screenshot(path=str(shots_dir(tmp_path) / "es_lora_kohya.png"), full_page=True)
