"""The app as a new user meets it, in a real Chromium, English and Spanish (issue 22).

One app start for the module, with no SDXL reachable (the Hub is offline), as on a fresh
machine. Screenshots of every tab in both languages go to ``BORDE_SHOTS`` when it is set.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import ui_text
from tests.e2e.harness import (
    EXAMPLES,
    ROOT,
    browser,
    page_text,
    shots_dir,
    switch_language,
)

pytestmark = pytest.mark.e2e
TABS = {"en": ["Vet Scanner", "Archive → Dataset", "Imperial LoRA"],
        "es": ["Escáner veterinario", "Archivo → Dataset", "LoRA imperial"]}
HERD_TAB = {"en": "Herd (many photos)", "es": "Rebaño (varias fotos)"}


@pytest.fixture(scope="module")
def page_scan(shared_data) -> Path:
    return next((shared_data / "pages" / "dta_text").glob("*.png"))


def answer_text(page) -> str:
    return " ".join(page.locator(f"#{x}").inner_text()
                    for x in ("vet-badge", "vet-label", "vet-advice"))


def test_a_spanish_browser_gets_the_whole_answer_in_spanish(app_url, page_scan, tmp_path):
    with browser(tmp_path / "profile", locale="es-ES", viewport=(1366, 900)) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.locator("#vet-photo input[type=file]").set_input_files(
            str(EXAMPLES / "fmd_cow_mouth.jpg"))
        page.get_by_role("button", name="Revisar este animal").click()
        page.get_by_text("no es un diagnóstico").first.wait_for(timeout=120_000)
        text = answer_text(page)
        assert "Emergencia - enfermedad de declaración obligatoria" in text
        assert "Fiebre aftosa" in text and "Especie:" in text and "veterinario oficial" in text
        for english in ("Emergency", "Foot-and-mouth", "Species", "unknown", "cow",
                        "not a diagnosis", "official veterinarian"):
            assert english not in text, english
        assert page.locator("#vet-heatmap img").count() >= 1
        page.screenshot(path=str(shots_dir(tmp_path) / "es_vet_answer.png"), full_page=True)
        # on a phone the answer sits right under the button, above the tips; no sideways scroll
        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_timeout(500)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        tips = page.get_by_text("Para mejores resultados").bounding_box()
        assert page.locator("#vet-run").bounding_box()["y"] < \
            page.locator("#vet-badge").bounding_box()["y"] < tips["y"]
        page.screenshot(path=str(shots_dir(tmp_path) / "es_vet_answer_phone.png"),
                        full_page=True)
        page.set_viewport_size({"width": 1366, "height": 900})

        # a page scan: the result box says why there is no condition, the heatmap goes away
        page.locator("#vet-photo input[type=file]").set_input_files(str(page_scan))
        page.get_by_role("button", name="Revisar este animal").click()
        page.locator("#vet-label", has_text="No es ganado").wait_for(timeout=120_000)
        page.locator("#vet-heatmap").wait_for(state="hidden", timeout=10_000)
        assert "animal de granja" in page.locator("#vet-advice").inner_text()

        # a language the farmer picks wins over the page's
        page.get_by_label("English").check()
        page.get_by_role("button", name="Revisar este animal").click()
        page.locator("#vet-label", has_text="Not livestock").wait_for(timeout=120_000)
        assert "not a diagnosis" in answer_text(page)


def test_after_settings_language_every_label_and_the_answer_are_spanish(app_url, tmp_path):
    with browser(tmp_path / "profile", locale="en-US") as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name="Archive → Dataset").click()
        switch_language(page)
        page.get_by_role("heading", name="Archivo → Dataset").wait_for(timeout=10_000)
        # tabs not on screen and gradio's own upload words follow at once, without a click
        tabs = page.locator("button[role=tab]")
        page.wait_for_function("() => [...document.querySelectorAll('button[role=tab]')]"
                               ".some(b => b.innerText.includes('Escáner veterinario'))")
        assert TABS["es"] == tabs.all_inner_texts()[:3]
        upload = page.locator("#archive-upload").inner_text()
        assert "Coloque el archivo aquí" in upload and "Drop File Here" not in upload
        page.get_by_role("tab", name="Escáner veterinario").click()
        assert page.get_by_role("tab", name=HERD_TAB["es"]).count() == 1
        assert "Suelte aquí una foto" in page.locator("#vet-photo").inner_text()
        page.locator("#vet-photo input[type=file]").set_input_files(
            str(EXAMPLES / "healthy_cow.jpg"))
        page.get_by_role("button", name="Revisar este animal").click()
        page.get_by_text("no es un diagnóstico").first.wait_for(timeout=120_000)
        assert "Especie: vaca" in answer_text(page) and "Species" not in answer_text(page)


def test_a_herd_table_fits_a_laptop_and_a_phone_and_downloads_everything(
        app_url, shared_data, page_scan, tmp_path):
    cond = shared_data / "livestock" / "conditions"
    herd = [EXAMPLES / "healthy_cow.jpg", next((cond / "mastitis").glob("*.jpg")),
            EXAMPLES / "fmd_cow_mouth.jpg"]
    with browser(tmp_path / "profile", viewport=(1366, 900)) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name=HERD_TAB["en"]).click()
        page.locator("#vet-herd").wait_for()
        assert page.locator("#vet-herd-table").inner_text().strip() == ""  # no "1 2 3" headers
        page.locator("#vet-herd input[type=file]").set_input_files([str(p) for p in herd])
        page.get_by_role("button", name="Check the herd").click()
        table = page.locator("#vet-herd-table table")
        table.wait_for(timeout=120_000)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        assert table.evaluate("t => t.scrollWidth <= t.parentElement.clientWidth")
        head = table.locator("thead")
        assert head.bounding_box()["height"] < 80  # not the 220 px of a wrapped header
        for name in ("urgency", "what to do"):
            box = table.locator("th", has_text=name).bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1366, name
        rows = table.locator("tbody tr")
        assert rows.count() == 3
        first = rows.first
        assert "fmd_cow_mouth.jpg" in first.inner_text()
        assert first.locator(".c-result").inner_text() == "Notifiable disease"
        assert first.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(255, 205, 210)"
        for cell in table.locator("td.c-confidence").all_inner_texts():
            assert re.fullmatch(r"\d{1,3}%|—", cell), cell
        text = table.inner_text()
        assert "nan" not in text and "0.9" not in text and "OK" not in text
        banner = page.locator("#vet-herd-alert").inner_text()
        assert "official veterinarian" in banner and "veterinario" not in banner
        page.screenshot(path=str(shots_dir(tmp_path) / "en_vet_herd_1366.png"), full_page=True)
        link = page.locator("#vet-herd-files tr", has=page.get_by_label("herd.json")).locator(
            "[data-testid=download-link]").first
        with page.expect_download() as dl:
            link.click()
        answers = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
        assert [Path(a["file"]).name for a in answers][0] == "fmd_cow_mouth.jpg"
        assert len(answers) == 3 and all("advice" in a and "reason" in a for a in answers)

        page.set_viewport_size({"width": 390, "height": 844})
        page.wait_for_function("() => getComputedStyle(document.querySelector("
                               "'#vet-herd-table thead')).display === 'none'")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        page.screenshot(path=str(shots_dir(tmp_path) / "en_vet_herd_phone.png"), full_page=True)


def test_without_a_base_model_the_lora_tab_says_so_and_generate_is_off(app_url, tmp_path):
    for locale, lang in (("en-US", "en"), ("es-ES", "es")):
        with browser(tmp_path / f"profile-{lang}", locale=locale) as ctx:
            page = ctx.new_page()
            page.goto(app_url)
            page.get_by_role("tab", name=TABS[lang][2]).click()
            base = page.locator("#lora-base").inner_text()
            said = ui_text.say(lang, "lora_base_missing", base="")
            assert said.split("**")[1] in base  # the bold sentence, in the page's language
            run = page.locator("#lora-run")
            assert run.is_disabled()
            assert page.locator("#lora-disabled").inner_text() == ui_text.say(lang,
                                                                              "lora_disabled")
            style = page.locator("#lora-style").inner_text()
            assert style.startswith("Style LoRA: none" if lang == "en" else "LoRA de estilo")
            for developer in ("--base", "Errno", "Name or service", "Traceback"):
                assert developer not in page_text(page)


def _markdown_words(text: str) -> str:
    """A string as it reads on the page: no markdown marks, one space between words."""
    text = re.sub(r"[#*`_]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _static_keys() -> set[str]:
    """Every key the tabs show through ``t("...")``, and the LoRA tab's two status lines."""
    import app
    from lora import ui as lora_ui

    code = "\n".join(p.read_text(encoding="utf-8")
                     for p in [ROOT / "app.py", *sorted((ROOT / "tabs").glob("*.py"))])
    keys = set(re.findall(r'\bt\("(\w+)"\)', code))
    return keys | set(lora_ui.status_keys(app.LORA))


def test_every_ui_string_is_spanish_on_the_spanish_page(app_url, tmp_path):
    """Walk ui_strings/ against each tab as rendered in English and in Spanish."""
    import app
    from archive import serverpath

    tables = ui_text.i18n_tables(app.FACTS)
    seen: dict[str, str] = {}
    shots = shots_dir(tmp_path)
    for locale, lang in (("en-US", "en"), ("es-ES", "es")):
        with browser(tmp_path / f"profile-{lang}", locale=locale, viewport=(1366, 900)) as ctx:
            page = ctx.new_page()
            page.goto(app_url)
            texts = []
            for i, name in enumerate(TABS[lang]):
                page.get_by_role("tab", name=name).click()
                page.wait_for_timeout(500)
                if i == 1:  # the page filter shows only for whole pages
                    page.get_by_label(tables[lang]["archive_unit_page"]).check()
                    page.wait_for_timeout(300)
                    texts.append(page_text(page))
                    page.get_by_label(tables[lang]["archive_unit_figure"]).check()
                    # a dropdown's choices are on the page only while it is open
                    page.locator("#archive-resize input").click()
                    page.get_by_role("option").first.wait_for(timeout=10_000)
                    texts.append(" \n".join(page.get_by_role("option").all_inner_texts()))
                    page.keyboard.press("Escape")
                texts.append(page_text(page))
                page.screenshot(path=str(shots / f"{lang}_{i + 1}_{name.split()[0]}.png"),
                                full_page=True)
                if i == 0:
                    page.get_by_role("tab", name=HERD_TAB[lang]).click()
                    page.wait_for_timeout(300)
                    texts.append(page_text(page))
                    page.screenshot(path=str(shots / f"{lang}_1_herd.png"), full_page=True)
            seen[lang] = _markdown_words("\n".join(texts))
    hidden = {"archive_server"} if serverpath.data_dir() is None else set()
    hidden.add("archive_book_pages")  # shown with a book's pages (test_archive_iiif.py)
    checked, missing, english_left = [], [], []
    for key in sorted(_static_keys() - hidden):
        en, es = (_markdown_words(tables[x][key]) for x in ("en", "es"))
        if en not in seen["en"] or es not in seen["es"]:
            missing.append(key)
        elif en != es and re.search(rf"(?<!\w){re.escape(en)}(?!\w)", seen["es"]):
            english_left.append(key)
        checked.append(key)
    assert not missing, f"not on the page: {missing}"
    assert not english_left, f"still English on the Spanish page: {english_left}"
    assert len(checked) >= 60
    for english in ("Drop File Here", "Drop Image Here", "Click to Upload", "pages (",
                    "max 2gb", "Runs"):
        assert english not in seen["es"], english


def test_on_a_spanish_phone_every_tab_shows_and_gradios_own_words_are_spanish(app_url, tmp_path):
    """No tab behind an unlabelled "•••"; the queue's "processing |" and an upload's "Invalid
    file type" (English in gradio's code, not in its language tables) read in Spanish."""
    with browser(tmp_path / "profile", locale="es-ES", viewport=(390, 844)) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name=TABS["es"][0]).wait_for(timeout=30_000)
        assert page.get_by_role("button", name="More tabs").count() == 0
        for name in TABS["es"]:
            box = page.get_by_role("tab", name=name).bounding_box()
            assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, name
        # every text gradio's status tracker and toasts show, as the page shows it
        page.evaluate("""() => { window.__seen = [];
            new MutationObserver(cs => { for (const c of cs) for (const n of
                [c.target, ...c.addedNodes]) { const t = n.textContent || '';
                if (/process|queue|cola|Invalid|archivo no se puede/i.test(t))
                    window.__seen.push(t); } })
            .observe(document.body, {childList: true, subtree: true, characterData: true}); }""")
        page.locator("#vet-photo input[type=file]").set_input_files(
            str(EXAMPLES / "healthy_cow.jpg"))
        page.get_by_role("button", name="Revisar este animal").click()
        page.get_by_text("no es un diagnóstico").first.wait_for(timeout=120_000)
        note = tmp_path / "notas.txt"
        note.write_text("no es una imagen\n", encoding="utf-8")
        page.get_by_role("tab", name=HERD_TAB["es"]).click()
        page.locator("#vet-herd input[type=file]").set_input_files(str(note))
        page.get_by_text("Solo se admiten").first.wait_for(timeout=10_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "es_phone_upload_refused.png"))
        seen = " ".join(page.evaluate("window.__seen"))
        assert ("procesando |" in seen or "en cola:" in seen) and "notas.txt" in seen
        assert "imágenes" in seen
        for english in ("processing |", "queue:", "Invalid file type", "Only image"):
            assert english not in seen, english
        assert "Invalid file type" not in page_text(page)
