"""The Vet Scanner's rough edges a new user met (issue 63), in a real Chromium and through
gradio_client: a new photo clears the old answer, a file that is not a photo is one
sentence in the page's language, a phone shows a herd's whole file names, a language
switch writes the answer on screen again, and the herd's downloads carry no server path.

One app start for the module. Screenshots go to ``BORDE_SHOTS`` when it is set.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

import ui_text
from tests.e2e.harness import (
    EXAMPLES,
    browser,
    page_text,
    shots_dir,
    switch_language,
)

pytestmark = pytest.mark.e2e
PHONE, DESKTOP = (390, 844), (1366, 800)
RUN = {"en": "Check this animal", "es": "Revisar este animal"}
HERD = {"en": ("Herd (many photos)", "Check the herd"),
        "es": ("Rebaño (varias fotos)", "Revisar el rebaño")}
SLOW = 120_000  # a model answer on a busy 2-core machine


@pytest.fixture(scope="module")
def bad(tmp_path_factory, shared_data) -> dict[str, Path]:
    """Files that are not photos a farmer may send: empty and corrupt JPEGs, a PDF, text."""
    folder = tmp_path_factory.mktemp("bad")
    (folder / "empty.jpg").write_bytes(b"")
    jpeg = (EXAMPLES / "healthy_cow.jpg").read_bytes()
    (folder / "corrupt.jpg").write_bytes(jpeg[:2] + bytes(len(jpeg) - 2))  # a header, zeros
    (folder / "notes.txt").write_text("weight 420 kg, calved in May\n", encoding="utf-8")
    return {"empty": folder / "empty.jpg", "corrupt": folder / "corrupt.jpg",
            "pdf": shared_data / "pdfs" / "linn.pdf", "text": folder / "notes.txt"}


def words(page) -> str:
    """The one-animal answer as it reads: badge, result box and advice."""
    return " ".join(page.locator(f"#{x}").inner_text() for x in ("vet-badge", "vet-label",
                                                                  "vet-advice"))


def answer(page, lang: str, photo: Path) -> None:
    """Choose ``photo``, press the button, wait for the answer (its disclaimer)."""
    page.locator("#vet-photo input[type=file]").set_input_files(str(photo))
    page.get_by_role("button", name=RUN[lang]).click()
    said = ui_text.say(lang, "vet_status_error") if photo.stat().st_size == 0 else \
        ("no es un diagnóstico" if lang == "es" else "not a diagnosis")
    page.locator("#vet-advice, #vet-label", has_text=said).first.wait_for(timeout=SLOW)


def wait_cleared(page) -> None:
    """No old answer left: no badge, no result, no advice, no heatmap."""
    page.wait_for_function("""() => ['vet-badge', 'vet-advice'].every(
        id => document.getElementById(id).innerText.trim() === '')
        && !document.querySelector('#vet-label .output-class')
        && !document.querySelector('#vet-heatmap img')""", timeout=30_000)


def test_a_new_photo_clears_the_old_answer_and_an_empty_jpeg_is_one_spanish_sentence(
        app_url, bad, tmp_path):
    with browser(tmp_path / "profile", locale="es-ES", viewport=PHONE) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        answer(page, "es", EXAMPLES / "fmd_cow_mouth.jpg")
        assert "Fiebre aftosa" in words(page) and page.locator("#vet-heatmap img").count()
        # a new upload
        page.locator("#vet-photo input[type=file]").set_input_files(
            str(EXAMPLES / "healthy_cow.jpg"))
        wait_cleared(page)
        assert "Fiebre aftosa" not in words(page)
        # an example's click
        page.get_by_role("button", name=RUN["es"]).click()
        page.locator("#vet-advice", has_text="Especie: vaca").wait_for(timeout=SLOW)
        page.locator("button.gallery-item").first.click()
        wait_cleared(page)
        # the photo taken away
        page.get_by_role("button", name=RUN["es"]).click()
        page.locator("#vet-advice", has_text="no es un diagnóstico").wait_for(timeout=SLOW)
        # gradio's icon labels read Spanish too (app.js)
        assert page.locator("#vet-photo [aria-label='Remove Image']").count() == 0
        page.locator("#vet-photo button[aria-label='Eliminar imagen']").click()
        wait_cleared(page)

        # an empty JPEG: the sentence in Spanish, no "Error" pill, no English
        answer(page, "es", bad["empty"])
        assert page.locator("#vet-label").inner_text().strip().endswith("Foto no leída")
        assert ui_text.say("es", "vet_unreadable") in page.locator("#vet-advice").inner_text()
        text = page_text(page)
        for wrong in ("Error", "could not be read", "PIL", "empty file"):
            assert wrong not in text, wrong
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
        page.screenshot(path=str(shots_dir(tmp_path) / "es_vet_empty_jpeg_phone.png"),
                        full_page=True)


def long_names(tmp_path: Path) -> list[Path]:
    """Real photos under names a phone cut to "cerdo hocico ….jpg": alike but for the end;
    one with a "!" that gradio leaves out of the path it saves the upload to."""
    folder = tmp_path / "herd"
    folder.mkdir()
    names = {"cerdo hocico de cerca lado izquierdo 01.jpg": "fmd_pig_feet.jpg",
             "cerdo hocico de cerca lado izquierdo 02.jpg": "healthy_cow.jpg",
             "vaca lechera del potrero norte!.jpg": "lumpy_skin_cow.jpg"}
    for name, source in names.items():
        shutil.copy(EXAMPLES / source, folder / name)
    return [folder / n for n in names]


def test_on_a_phone_the_herd_shows_whole_file_names_and_new_files_clear_it(
        app_url, bad, tmp_path):
    photos = [*long_names(tmp_path), bad["empty"]]
    with browser(tmp_path / "profile", locale="es-ES", viewport=PHONE) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        page.get_by_role("tab", name=HERD["es"][0]).click()
        page.locator("#vet-herd input[type=file]").set_input_files([str(p) for p in photos])
        page.get_by_label(photos[-1].name).first.wait_for(timeout=60_000)
        page.get_by_role("button", name=HERD["es"][1]).click()
        table = page.locator("#vet-herd-table table")
        table.wait_for(timeout=SLOW)
        # the chosen files: each name whole (not "cerdo hocico ….jpg"), inside its box
        listed = page.locator("#vet-herd td.filename").evaluate_all("""cells => cells.map(c => {
            const box = c.getBoundingClientRect(), stem = c.querySelector('.stem');
            const inside = [...c.querySelectorAll('span')].every(s => [...s.getClientRects()]
                .every(r => r.left >= box.left - 1 && r.right <= box.right + 1));
            return [[...c.querySelectorAll('span')].map(s => s.textContent).join(''), inside,
                    stem.scrollWidth <= stem.getBoundingClientRect().width + 1];
        })""")
        assert sorted(n for n, _, _ in listed) == sorted(p.name for p in photos)
        assert all(inside and uncut for _, inside, uncut in listed), listed
        # the answers: one card a photo, titled with its whole name as the farmer chose it
        cells = table.locator("td.c-photo").evaluate_all(
            "cells => cells.map(c => [c.innerText, c.scrollWidth <= c.clientWidth])")
        assert sorted(n for n, _ in cells) == sorted(p.name for p in photos)
        assert all(fits for _, fits in cells), cells
        empty = table.locator("tr", has_text="empty.jpg")
        assert empty.locator(".c-result").inner_text().endswith("Foto no leída")
        assert "no se pudo leer como foto" in empty.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
        page.screenshot(path=str(shots_dir(tmp_path) / "es_vet_herd_names_phone.png"),
                        full_page=True)
        # new files: the old table, banner and downloads go at once
        page.locator("#vet-herd input[type=file]").set_input_files(str(photos[0]))
        page.wait_for_function("""() => !document.querySelector('#vet-herd-table table')
            && !document.querySelector('#vet-herd-alert')
            && !document.querySelector('#vet-herd-files a')""", timeout=30_000)


def test_after_a_language_switch_the_answer_on_screen_is_in_the_new_language(
        app_url, tmp_path):
    herd = [EXAMPLES / "fmd_cow_mouth.jpg", EXAMPLES / "healthy_cow.jpg"]
    with browser(tmp_path / "profile", locale="en-US", viewport=DESKTOP) as ctx:
        page = ctx.new_page()
        page.goto(app_url)
        answer(page, "en", EXAMPLES / "fmd_cow_mouth.jpg")
        english = words(page)
        assert "Foot-and-mouth" in english and "Species:" in english
        page.get_by_role("tab", name=HERD["en"][0]).click()
        page.locator("#vet-herd input[type=file]").set_input_files([str(p) for p in herd])
        page.get_by_label(herd[-1].name).first.wait_for(timeout=60_000)
        page.get_by_role("button", name=HERD["en"][1]).click()
        page.locator("#vet-herd-table th", has_text="what to do").wait_for(timeout=SLOW)

        switch_language(page)  # Settings -> Language -> Español: app.js clicks #borde-relang
        page.locator("#vet-herd-table th", has_text="qué hacer").wait_for(timeout=30_000)
        table = page.locator("#vet-herd-table").inner_text()
        banner = page.locator("#vet-herd-alert").inner_text()
        assert "Enfermedad de declaración obligatoria" in table and "veterinario" in banner
        for left in ("what to do", "Notifiable", "Routine", "official veterinarian"):
            assert left not in table + banner, left
        page.get_by_role("tab", name="Un animal").click()
        page.locator("#vet-advice", has_text="no es un diagnóstico").wait_for(timeout=30_000)
        spanish = words(page)
        assert "Fiebre aftosa" in spanish and "Especie:" in spanish
        for left in ("Foot-and-mouth", "Species", "Emergency", "not a diagnosis"):
            assert left not in spanish, left
        assert page.locator("#vet-heatmap img").count() >= 1  # the same answer, not a rerun
        page.screenshot(path=str(shots_dir(tmp_path) / "es_vet_after_switch_1366.png"),
                        full_page=True)

        # an answer language the farmer picks wins, also over the next switch
        page.locator("#vet-lang").get_by_label("English").check()
        page.locator("#vet-advice", has_text="not a diagnosis").wait_for(timeout=30_000)
        switch_language(page, "English")
        page.get_by_role("tab", name=HERD["en"][0]).wait_for(timeout=30_000)
        page.wait_for_timeout(2_000)
        assert "Foot-and-mouth" in words(page) and "Fiebre" not in words(page)


@pytest.fixture(scope="module")
def api(app_url):
    pytest.importorskip("gradio_client")
    from gradio_client import Client

    return Client(app_url, verbose=False)


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_api_answers_a_file_that_is_not_a_photo_with_one_sentence(api, bad, lang):
    """The README's promise: a bad input is an answer, not an exception."""
    from gradio_client import handle_file

    for kind, path in bad.items():
        other = "es" if lang == "en" else "en"  # the asked language wins over the page's
        label, badge, advice, heatmap = api.predict(photo=handle_file(str(path)), lang=lang,
                                                    ui_lang=other, api_name="/vet_run")
        assert label["label"] == ui_text.say(lang, "vet_status_error"), kind
        assert ui_text.say(lang, "vet_unreadable") in advice, kind
        assert ui_text.say(lang, "vet_status_error") in badge and not heatmap["visible"], kind
        assert ui_text.say(other, "vet_unreadable") not in advice, kind


def test_the_herd_answers_around_a_bad_file_and_its_downloads_carry_no_server_path(api, bad):
    from gradio_client import handle_file

    herd = [bad["empty"], EXAMPLES / "fmd_cow_mouth.jpg", bad["pdf"]]
    alert, table, downloads = api.predict(files=[handle_file(str(p)) for p in herd],
                                          lang="auto", ui_lang="es", api_name="/vet_run_herd")
    assert "fmd_cow_mouth.jpg" in alert and table.count("<tr") == 4
    got = {Path(f).name: Path(f).read_text(encoding="utf-8") for f in downloads}
    answers = {a["file"]: a for a in json.loads(got["herd.json"])}
    assert set(answers) == {"empty.jpg", "fmd_cow_mouth.jpg", "linn.pdf"}  # no folder
    for name in ("empty.jpg", "linn.pdf"):
        assert answers[name]["status"] == "error"
        assert answers[name]["reason_code"] == "unreadable"
    cow = answers["fmd_cow_mouth.jpg"]
    assert cow["status"] in ("ok", "uncertain") and cow["condition"] == "fmd"
    rows = list(csv.reader(io.StringIO(got["herd.csv"])))
    header = rows[0]
    assert len(header) == len(set(header)), header  # one header row, each column once
    assert header[:3] == ["file", "status", "resultado"] and "especie" in header
    assert set(answers["empty.jpg"]) <= set(header)  # every field of herd.json
    assert sorted(r[0] for r in rows[1:]) == sorted(answers)
    for text in (got["herd.csv"], got["herd.json"], table, alert):
        assert "/tmp" not in text and "gradio" not in text
