"""The Archive tab as a newcomer met it (issue #63), in a real Chromium, Spanish and English,
desktop and phone: an error is one sentence in the page's language naming the file, never
its server path; the progress shows where Build was clicked; on a phone the review's
captions sit under the crops and the rebuild message is as wide as the review."""

from __future__ import annotations

import pytest

from tests.e2e.harness import browser, shots_dir
from tests.pdf_factory import chapbook_pages, scans_pdf
from ui_text import say

pytestmark = pytest.mark.e2e
DESKTOP, PHONE = (1366, 800), (390, 844)
LOCALES = {"es": "es-ES", "en": "en-US"}
TAB = {"es": "Archivo → Dataset", "en": "Archive → Dataset"}
# The status line's progress bar (or its summary) lies wholly inside the window.
PROGRESS_IN_VIEW = """() => {
    const shown = document.querySelector('#archive-status .archive-progress, '
                                         + '#archive-status .borde-done');
    if (!shown) return false;
    const r = shown.getBoundingClientRect();
    return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight
        && r.left >= 0 && r.right <= innerWidth; }"""
# For each tile of the review: the share of its crop's box that its caption covers.
CAPTION_OVER_CROP = """() => [...document.querySelectorAll('#archive-review .thumbnail-item')]
    .map(tile => {
        const i = tile.querySelector('img').getBoundingClientRect();
        const c = tile.querySelector('.caption-label').getBoundingClientRect();
        const w = Math.max(0, Math.min(i.right, c.right) - Math.max(i.left, c.left));
        const h = Math.max(0, Math.min(i.bottom, c.bottom) - Math.max(i.top, c.top));
        return w * h / (i.width * i.height); })"""
WIDTH = "sel => document.querySelector(sel).getBoundingClientRect().width"


@pytest.fixture(scope="module")
def pliego(shared_data, tmp_path_factory):
    """A chapbook of real woodcut pages, one of them twice (a duplicate to review)."""
    pages = chapbook_pages(shared_data)[:8]
    return scans_pdf(tmp_path_factory.mktemp("newcomer") / "Pliego.pdf", [*pages, pages[0]])


def _tab(ctx, url: str, lang: str):
    page = ctx.new_page()
    page.goto(url)
    page.get_by_role("tab", name=TAB[lang]).click()
    return page


def _upload(page, box: str, path) -> None:
    page.locator(f"{box} input[type=file]").set_input_files(str(path))


def _to_english(page) -> None:
    """Settings -> Language -> English from the Spanish page (the link says Configuración),
    then the hidden relang button app.js clicks after a switch."""
    page.get_by_text("Configuración").first.click()
    box = page.get_by_role("combobox", name="Language")
    box.wait_for(timeout=30_000)
    box.click()
    page.get_by_role("option", name="English").click()
    page.locator("[role=dialog] button").first.click()
    page.evaluate("document.querySelector('#borde-relang').click()")


def _not_a_pdf(page, folder, lang: str) -> str:
    """Upload a text file named .pdf, build; the status line's words."""
    fake = folder / "notapdf.pdf"
    fake.write_text("Lista de grabados del pliego, escrita a mano.\n", encoding="utf-8")
    _upload(page, "#archive-upload", fake)
    page.get_by_label(fake.name).first.wait_for(timeout=60_000)
    page.locator("#archive-run").click()
    page.locator("#archive-status .borde-error").wait_for(timeout=60_000)
    return page.locator("#archive-status").inner_text().strip()


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_text_file_named_pdf_is_one_sentence_in_the_page_language(app_url, tmp_path, lang):
    with browser(tmp_path / "profile", locale=LOCALES[lang], viewport=DESKTOP) as ctx:
        page = _tab(ctx, app_url, lang)
        said = _not_a_pdf(page, tmp_path, lang)
        page.screenshot(path=str(shots_dir(tmp_path) / f"{lang}_desktop_not_a_pdf.png"))
    assert said == say(lang, "archive_failed",
                       detail=say(lang, "archive_error_not_pdf", name="notapdf.pdf")), said
    assert "/tmp" not in said and "gradio" not in said and "%PDF" not in said
    if lang == "es":
        assert "not a PDF" not in said and "The build" not in said


def test_spanish_desktop_progress_where_the_click_was_and_a_binary_decisions_file(
        app_url, pliego, shared_data, tmp_path):
    """Build clicked at the foot of the window: the progress is in view at once. Then a
    spreadsheet's binary file as decisions: a Spanish sentence naming it, no path, no codec;
    after a switch to English the summary and that sentence are written again in English."""
    with browser(tmp_path / "profile", locale="es-ES", viewport=DESKTOP) as ctx:
        page = _tab(ctx, app_url, "es")
        _upload(page, "#archive-upload", pliego)
        page.get_by_label(pliego.name).first.wait_for(timeout=60_000)
        run = page.locator("#archive-run")
        run.scroll_into_view_if_needed()
        # the button at the very foot of the window, as after scrolling down a long form
        run.evaluate("b => window.scrollBy(0, b.getBoundingClientRect().bottom - innerHeight)")
        assert not page.evaluate(PROGRESS_IN_VIEW)
        run.click()
        # where it shows, not how soon: the first line waits for the server, slow on a busy
        # machine; the page scrolls to its (reserved) place at once
        page.wait_for_function(PROGRESS_IN_VIEW, timeout=60_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "es_desktop_progress.png"))
        page.locator("#archive-status .borde-done").wait_for(timeout=180_000)
        page.locator("#archive-review .thumbnail-item").first.wait_for(timeout=30_000)
        binary = tmp_path / "decisiones.csv"  # a scan saved under a .csv name: 0xff first
        binary.write_bytes(chapbook_pages(shared_data)[0].read_bytes())
        _upload(page, "#archive-decisions", binary)
        message = page.locator("#archive-review-status", has_text="decisiones.csv")
        message.wait_for(timeout=30_000)
        said = message.inner_text().strip()
        page.screenshot(path=str(shots_dir(tmp_path) / "es_desktop_bad_decisions.png"),
                        full_page=True)
        _to_english(page)
        page.locator("#archive-review-status", has_text="The decisions were not taken").wait_for(
            timeout=30_000)
        page.locator("#archive-status", has_text="Done: 9 page(s) read").wait_for(timeout=30_000)
        page.screenshot(path=str(shots_dir(tmp_path) / "en_desktop_after_switch.png"),
                        full_page=True)
    assert said == say("es", "archive_decisions_bad", detail=say(
        "es", "archive_error_decisions_unreadable", name="decisiones.csv")), said
    assert "/tmp" not in said and "codec" not in said and "0xff" not in said


@pytest.mark.parametrize("lang", ["es", "en"])
def test_phone_review_shows_the_whole_crop_and_a_full_width_message(app_url, pliego, tmp_path,
                                                                      lang):
    with browser(tmp_path / "profile", locale=LOCALES[lang], viewport=PHONE) as ctx:
        page = _tab(ctx, app_url, lang)
        _upload(page, "#archive-upload", pliego)
        page.get_by_label(pliego.name).first.wait_for(timeout=60_000)
        page.locator("#archive-run").click()
        page.locator("#archive-status .borde-done").wait_for(timeout=180_000)
        tiles = page.locator("#archive-review .thumbnail-item")
        tiles.first.wait_for(timeout=30_000)
        covered = page.evaluate(CAPTION_OVER_CROP)
        tiles.first.click()
        page.wait_for_timeout(500)
        page.locator("#archive-rebuild").click()
        page.locator("#archive-review-status", has_text=say(lang, "archive_rebuilt")[:6]).wait_for(
            timeout=60_000)
        page.locator("#archive-rebuild").scroll_into_view_if_needed()
        page.screenshot(path=str(shots_dir(tmp_path) / f"{lang}_phone_review.png"))
        message, review = page.evaluate(WIDTH, "#archive-review-status"), page.evaluate(
            WIDTH, "#archive-review")
        window = page.evaluate("innerWidth")
    assert len(covered) >= 4 and max(covered) < 0.05, covered  # captions under the crops
    assert message >= 0.9 * review and message >= 0.75 * window, (message, review, window)
