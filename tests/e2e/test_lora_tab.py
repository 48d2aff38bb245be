"""The Imperial LoRA tab in a real Chromium: images on the tiny SDXL, wrong files refused in
one sentence, a language switch, and (a second app start) a machine where the Hub refuses.
"""

from __future__ import annotations

import re
import shutil

import pytest

import ui_text
from tests.e2e.harness import (
    browser,
    chromium_path,
    free_port,
    running_app,
    shots_dir,
    switch_language,
)
from tests.test_lora import SD15_KOHYA, save_lora
from tests.tiny_models import build_sdxl_lora

pytestmark = pytest.mark.e2e
TAB = {"en": "Imperial LoRA", "es": "LoRA imperial"}
SDXL_HUB_ID = "stabilityai/stable-diffusion-xl-base-1.0"


@pytest.fixture(scope="module")
def app_url(tiny_sdxl_dir):
    chromium_path()  # skip (or fail in CI) before paying for the app start
    with running_app({"LORA_BASE_MODEL": str(tiny_sdxl_dir), "LORA_WEIGHTS": ""}) as url:
        yield url


@pytest.fixture(scope="module")
def refused_hub_url(tmp_path_factory):
    """The app with the default (Hub) base, online, on a machine whose Hub refuses: the
    Hub is a closed loopback port and the cache is empty."""
    chromium_path()
    env = {"HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "0", "LORA_BASE_MODEL": "",
           "LORA_WEIGHTS": "", "HF_ENDPOINT": f"http://127.0.0.1:{free_port()}",
           "HF_HOME": str(tmp_path_factory.mktemp("hf")), "BORDE_WARM_IMPORTS": "0",
           "NO_PROXY": "127.0.0.1,localhost"}
    with running_app(env) as url:
        yield url


def hub_box(page):
    return page.locator("#lora-style-hub textarea, #lora-style-hub input").first


def upload(page, path) -> None:
    page.locator("#lora-style-file input[type=file]").set_input_files(str(path))


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
        for wrong, said in ((junk, "no es un LoRA en formato safetensors"),
                            (model, "no contiene pesos LoRA")):
            upload(page, wrong)
            page.locator("#lora-style-note", has_text=said).wait_for(timeout=30_000)
            text = note.inner_text()
            assert text.startswith("⚠ Este ") and text.endswith(".")  # one sentence
            assert len(text.splitlines()) == 1 and "Traceback" not in text and "header" not in text
            assert page.locator("#lora-style-file").get_by_label(wrong.name).count() == 0
        page.screenshot(path=str(shots_dir(tmp_path) / "es_lora_wrong_file.png"), full_page=True)
        # a Hub id that cannot be reached: one sentence under Generate, no red badge anywhere
        page.get_by_label("Pasos").first.fill("2")
        assert hub_box(page).get_attribute("placeholder") == "propietario/nombre"
        hub_box(page).fill("nobody/no-such-style")
        page.get_by_role("button", name="Generar").click()
        page.locator("#lora-message", has_text="no se encuentra el LoRA de estilo").wait_for(
            timeout=60_000)
        assert page.locator("#lora-gallery .error, #lora-message .error").count() == 0
        assert "Errno" not in page.locator("#lora-message").inner_text()
        hub_box(page).fill("")
        upload(page, kohya)
        page.locator("#lora-style", has_text="formato kohya").wait_for(timeout=30_000)
        assert note.inner_text().strip() == ""
        page.get_by_role("button", name="Generar").click()
        page.get_by_text("LoRA lora_kohya.safetensors").last.wait_for(timeout=120_000)
        assert page.locator("#lora-message").inner_text().strip() == ""
        page.screenshot(path=str(shots_dir(tmp_path) / "es_lora_kohya.png"), full_page=True)


def test_after_a_language_switch_the_message_and_the_style_lines_are_said_again(
        app_url, tiny_sdxl_dir, tmp_path):
    _, kohya = build_sdxl_lora(tiny_sdxl_dir, tmp_path / "style")
    sd15 = save_lora(tmp_path / "sd15_style.safetensors", SD15_KOHYA)
    say = ui_text.say
    with browser(tmp_path / "profile", viewport=(1366, 800)) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name=TAB["en"]).click()
        style, message, note = (page.locator(f"#lora-{x}") for x in ("style", "message",
                                                                      "style-note"))
        # English: an uploaded style, and a message under Generate
        upload(page, kohya)
        style.filter(has_text="(kohya format)").wait_for(timeout=30_000)
        page.get_by_label("Prompt", exact=True).fill("")
        page.get_by_role("button", name="Generate").click()
        message.filter(has_text=say("en", "lora_err_prompt")).wait_for(timeout=30_000)

        switch_language(page, "Español")
        message.filter(has_text=say("es", "lora_err_prompt")).wait_for(timeout=30_000)
        style.filter(has_text="(formato kohya)").wait_for(timeout=30_000)

        # Spanish: the upload cleared (its line goes back), an SD 1.5 file refused
        page.locator("#lora-style-file").get_by_role(
            "button", name=re.compile("^(Limpiar|Clear)$")).click()  # gradio's own word
        style.filter(has_text="no hay ninguno").wait_for(timeout=30_000)
        upload(page, sd15)
        note.filter(has_text=say("es", "lora_err_file_other_base", family="SD 1.5")).wait_for(
            timeout=30_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "es_lora_after_switch.png"),
                        full_page=True)

        switch_language(page, "English")
        note.filter(has_text=say("en", "lora_err_file_other_base", family="SD 1.5")).wait_for(
            timeout=30_000)
        message.filter(has_text=say("en", "lora_err_prompt")).wait_for(timeout=30_000)
        style.filter(has_text="Style LoRA: none loaded").wait_for(timeout=30_000)
        assert "Escriba" not in message.inner_text() and "⚠ Este" not in note.inner_text()


def test_where_the_hub_refuses_the_tab_says_so_before_any_click(refused_hub_url, tmp_path):
    """No click anywhere before the first look: the line, the off button and its reason."""
    sd15 = save_lora(tmp_path / "sd15_style.safetensors", SD15_KOHYA)
    for locale, lang, viewport in (("en-US", "en", (1366, 800)), ("es-ES", "es", (390, 844))):
        with browser(tmp_path / f"profile-{lang}", locale=locale, viewport=viewport) as ctx:
            page = ctx.new_page()
            page.goto(refused_hub_url)
            page.get_by_role("tab", name=TAB[lang]).click()
            base = page.locator("#lora-base")
            base.wait_for(timeout=30_000)
            bold = ui_text.say(lang, "lora_base_missing", base=SDXL_HUB_ID).split("**")[1]
            assert bold in base.inner_text() and SDXL_HUB_ID in base.inner_text()
            assert page.locator("#lora-run").is_disabled()
            assert page.locator("#lora-disabled").inner_text() == ui_text.say(lang,
                                                                              "lora_disabled")
            assert hub_box(page).get_attribute("placeholder") == ui_text.say(
                lang, "lora_style_hub_placeholder")
            upload(page, sd15)
            said = ui_text.say(lang, "lora_err_file_other_base", family="SD 1.5")
            page.locator("#lora-style-note", has_text=said).wait_for(timeout=30_000)
            page.screenshot(path=str(shots_dir(tmp_path) / f"{lang}_lora_hub_refused.png"),
                            full_page=True)
