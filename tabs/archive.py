"""The Archive -> Dataset tab: scans in, a zip of their illustrations out, then the review."""

from __future__ import annotations

import logging
from pathlib import Path

import gradio as gr

from archive import ArchiveError, serverpath
from archive import ui as archive_ui
from archive.caption import DEFAULT_CAPTION
from tabs.common import MAX_PAGES, note, t
from ui_text import UI_LANG_JS, Said, Say, sayer, words

log = logging.getLogger("borde.archive")


def _archive_pending(status: str, gallery=()) -> tuple:
    """The tab's seven outputs before a zip exists: no histogram, zip, review or tiles, and
    nothing final to say again after a language switch."""
    return status, list(gallery), None, None, None, [], None


def _archive_failed(said: Said, s: Say, gallery=()) -> tuple:
    """An error as the tab's outputs: one sentence, kept to be said again."""
    return (note(words(said, s), "error"), list(gallery), None, None, None, [],
            {"cls": "error", "said": said})


def archive_run(uploads, server, unit, filt, threshold, size, resize, keep_duplicates, caption,
                trigger, show, captions=False, manifest="", ui_lang="en"):
    """Build a dataset, streaming, from the PDFs and then the IIIF manifest at ``manifest``
    (a web address; a collection builds its every book). Returns (status, crops, scores,
    zip, review): a status line (HTML: the progress, then the summary or the error), the
    latest crops with their scores, the score histogram, the dataset zip, and the most
    doubtful crops for the review."""
    s = sayer(ui_lang)
    try:
        paths: list[str | Path] = [Path(f) for f in uploads or []]
        paths += [serverpath.resolve_choice(c) for c in server or []]
        address = archive_ui.manifest_address(manifest)
        paths += [address] if address else []  # a str: Path("https://x") is "https:/x"
    except ArchiveError as exc:
        yield _archive_failed(archive_ui.error_said(exc), s)
        return
    try:
        cut = float(threshold) if str(threshold or "").strip() else None
    except ValueError:
        yield _archive_failed([("archive_bad_threshold", {"value": repr(threshold)})], s)
        return
    options = dict(unit=unit, filter=filt if unit == "page" else "figures", threshold=cut,
                   size=int(size), resize=resize or None, keep_duplicates=bool(keep_duplicates),
                   caption=caption, trigger=(trigger or "").strip() or None, max_pages=MAX_PAGES)
    picker = serverpath.data_dir() is not None
    for snap in archive_ui.run_job(paths, s, server_picker=picker, **options):
        if snap.error:
            yield _archive_failed(snap.said, s, snap.gallery)
            return
        if snap.zip_path is None:
            yield _archive_pending(snap.status, snap.gallery)
            continue
        said = snap.said
        if captions:  # the model's captions, written into the zip before it is offered
            captioning = s("archive_captioning")
            yield _archive_pending(note(f"{snap.status} {captioning}"), snap.gallery)
            said = [*said, *archive_ui.caption_zip(snap.zip_path)]
        review = archive_ui.start_review(snap.zip_path)
        tiles = archive_ui.review_gallery(review, s, show)
        yield (note(words(said, s), "done"), snap.gallery, snap.histogram, str(snap.zip_path),
               review, tiles, {"cls": "done", "said": said})


KEEP_HOURS = f"{archive_ui.JOB_KEEP_S / 3600:g}"


def _book_shown(said: Said, cls: str, s: Say, files=()) -> tuple:
    """The book line and its thumbnails (hidden when there are none), and what the line
    says, kept to be said again after a language switch."""
    line = note(words(said, s), cls) if said else ""
    return (line, gr.update(value=list(files), visible=bool(files)),
            {"cls": cls, "said": said} if said else None)


def archive_look(manifest: str, ui_lang: str = "en") -> tuple:
    """The manifest's book before the build: its title, its pages (a collection's books)
    and its first pages small. Returns (book line, thumbnails, what the line says)."""
    s = sayer(ui_lang)
    try:
        said, files = archive_ui.look_at_book(manifest, max_pages=MAX_PAGES)
    except Exception as exc:  # noqa: BLE001 - one sentence on screen, the rest in the log
        if isinstance(exc, ArchiveError):
            log.warning("manifest not shown: %s", exc)
        else:
            log.exception("manifest preview failed")
        return _book_shown(archive_ui.error_said(exc), "error", s)
    too_long = any(key.startswith("archive_error_") for key, _ in said)
    return _book_shown(said, "error" if too_long else "note", s, files)


def archive_toggle(review, show, ui_lang, evt: gr.SelectData):
    """A click on a crop flips keep/drop; the gallery redraws with the new look."""
    if review is None or archive_ui.build_gone(review):
        return [], None
    archive_ui.toggle(review, evt.index)
    return archive_ui.review_gallery(review, sayer(ui_lang), show), review


def archive_show(review, show, ui_lang):
    if review is None or archive_ui.build_gone(review):
        return []
    return archive_ui.review_gallery(review, sayer(ui_lang), show)


def _gone(review) -> Said:
    """Why there is nothing to review: no build yet, or its folder was swept."""
    if review is None:
        return [("archive_rebuild_first", {})]
    return [("archive_build_gone", {"keep_hours": KEEP_HOURS})]


def _take_decisions(review, decisions) -> Said:
    """A decisions file joined to the review; what it did (or why not), to be said."""
    if not decisions:
        return []
    try:
        return archive_ui.decisions_taken(review, decisions)
    except ArchiveError as exc:  # the upload's own name, never gradio's folder for it
        detail = archive_ui.error_said(exc, **({"name": Path(decisions).name}
                                               if "name" in exc.fields else {}))
        return [("archive_decisions_bad", {"detail": detail})]


def archive_decisions(review, decisions, show, ui_lang):
    """An uploaded decisions file joins the review; the tiles redraw, the upload clears.
    Returns (tiles, review, message, upload, what the message says)."""
    s = sayer(ui_lang)
    if review is None or archive_ui.build_gone(review):
        said = _gone(review)
        return [], None, words(said, s), None, said
    said = _take_decisions(review, decisions)
    return archive_ui.review_gallery(review, s, show), review, words(said, s), None, said


def archive_rebuild(review=None, decisions=None, ui_lang="en"):
    """The curated zip from the build's own bytes, with ``decisions`` (a CSV file, for API
    callers) taken first. Returns (zip, message, what the message says): the new zip (or the
    earlier one, unchanged, when there is nothing to rebuild) and what changed, in words."""
    s = sayer(ui_lang)
    if review is None or archive_ui.build_gone(review):
        said = _gone(review)
        return gr.skip(), words(said, s), said
    taken = _take_decisions(review, decisions)
    try:
        path, said = archive_ui.rebuilt(review)
    except ArchiveError as exc:
        said = [*taken, ("archive_rebuild_failed", {"detail": archive_ui.error_said(exc)})]
        return gr.skip(), words(said, s), said
    said = [*said, *taken]
    return str(path), words(said, s), said


def _said_again(shown: dict | None, s: Say) -> str | dict:
    """A line kept as {"cls", "said"}, in the new language; left as it is without one."""
    return note(words(shown["said"], s), shown["cls"]) if shown else gr.skip()


def archive_relang(status_said: dict | None, review_said: Said | None, review, show,
                   ui_lang: str) -> tuple:
    """After a language switch: the summary (or error), the review's message and its tiles
    written again in the new language; a progress line still running is left as it is."""
    s = sayer(ui_lang)
    status = _said_again(status_said, s)
    message = words(review_said, s) if review_said else gr.skip()
    tiles = (archive_ui.review_gallery(review, s, show)
             if review is not None and not archive_ui.build_gone(review) else gr.skip())
    return status, message, tiles


def archive_book_relang(book_said: dict | None, ui_lang: str) -> str | dict:
    """After a language switch: the manifest's book line (or why it could not be read) in
    the new language; the thumbnails have no words."""
    return _said_again(book_said, sayer(ui_lang))


# The status line sits under the Build button, where the click was; a button at the foot
# of the window scrolls it into view (only if it is not in view), then the page language.
BUILD_JS = ("(...args) => { setTimeout(() => document.querySelector('#archive-status')"
            "?.scrollIntoView({block: 'nearest', behavior: 'smooth'}), 300); "
            f"return ({UI_LANG_JS})(...args); }}")


def archive_tab(ui_lang: gr.Radio, relang: gr.Button) -> None:
    """The tab's widgets and events; ``relang`` is clicked after a language switch."""
    gr.Markdown(t("archive_intro"))
    root = serverpath.data_dir()
    with gr.Row():
        with gr.Column():
            uploads = gr.File(label=t("archive_upload"), file_count="multiple",
                              file_types=[".pdf"], type="filepath", elem_id="archive-upload")
            server = gr.Dropdown(choices=serverpath.list_pdfs(root), multiselect=True,
                                 label=t("archive_server"), visible=root is not None)
            with gr.Row(elem_id="archive-manifest-row"):
                manifest = gr.Textbox("", label=t("archive_manifest"),
                                      info=t("archive_manifest_info"),
                                      placeholder=t("archive_manifest_placeholder"), max_lines=1,
                                      scale=4, elem_id="archive-manifest")
                look = gr.Button(t("archive_manifest_look"), scale=0, min_width=120,
                                 elem_id="archive-manifest-look")
            book = gr.HTML(elem_id="archive-book")
            book_pages = gr.Gallery(label=t("archive_book_pages"), columns=6, rows=1,
                                    height="auto", object_fit="contain", allow_preview=False,
                                    interactive=False, visible=False, buttons=[],
                                    elem_id="archive-book-pages")
            units = [(t("archive_unit_figure"), "figure"), (t("archive_unit_page"), "page")]
            unit = gr.Radio(units,
                            value="figure", label=t("archive_unit"), info=t("archive_unit_info"))
            gr.Markdown(t("archive_finder"), elem_id="archive-finder")
            filters = [(t("archive_filter_figures"), "figures"),
                       (t("archive_filter_layout"), "layout"), (t("archive_filter_std"), "std")]
            filt = gr.Radio(filters, value="figures", visible=False,
                            label=t("archive_filter"), info=t("archive_filter_info"))
            threshold = gr.Textbox(value="", label=t("archive_threshold"),
                                   placeholder=t("archive_threshold_placeholder"))
            with gr.Row(elem_id="archive-size-row"):
                size = gr.Dropdown(["512", "768", "1024"], value="1024", label=t("archive_size"),
                                   info=t("archive_size_info"))
                modes = [(t("archive_resize_auto"), ""), (t("archive_resize_bucket"), "bucket"),
                         (t("archive_resize_pad"), "pad"), (t("archive_resize_crop"), "crop"),
                         (t("archive_resize_stretch"), "stretch")]
                resize = gr.Dropdown(modes, value="", label=t("archive_resize"),
                                     info=t("archive_resize_info"), elem_id="archive-resize")
            keep_duplicates = gr.Checkbox(value=False, label=t("archive_keep_duplicates"))
            caption = gr.Textbox(value=DEFAULT_CAPTION, label=t("archive_caption"))
            trigger = gr.Textbox(value="", label=t("archive_trigger"),
                                 placeholder=t("archive_trigger_placeholder"))
            captions = gr.Checkbox(value=False, label=t("archive_captioner"),
                                   info=archive_ui.captioner.DEFAULT_MODEL)
            run = gr.Button(t("archive_run"), variant="primary", elem_id="archive-run")
            status = gr.HTML(label="status", show_label=False, elem_id="archive-status")
            download = gr.File(label=t("archive_download"), elem_id="archive-download")
            gr.Markdown(t("archive_cli_hint"))
            gr.Markdown(t("archive_limits"), elem_id="archive-limits")
        with gr.Column():
            gallery = gr.Gallery(label=t("archive_gallery"), columns=3, height=360,
                                 object_fit="contain", elem_id="archive-gallery",
                                 interactive=False)
            hist = gr.Image(label=t("archive_hist"), type="pil", interactive=False,
                            elem_id="archive-hist")
    with gr.Accordion(t("archive_review"), open=True):
        gr.Markdown(t("archive_review_info"))
        show = gr.Slider(8, 400, value=archive_ui.REVIEW_SHOW, step=8,
                         label=t("archive_review_show"))
        review_gallery = gr.Gallery(label=t("archive_review_gallery"), columns=6, height=520,
                                    allow_preview=False, interactive=False, object_fit="contain",
                                    elem_id="archive-review")
        with gr.Row(elem_id="archive-rebuild-row"):
            rebuild = gr.Button(t("archive_rebuild"), variant="primary", elem_id="archive-rebuild")
            review_status = gr.Markdown(label="message", elem_id="archive-review-status")
        decisions = gr.File(label=t("archive_decisions_upload"), file_types=[".csv"],
                            type="filepath", elem_id="archive-decisions")
    review = gr.State(None)  # per browser session: two curators never share a review
    status_said = gr.State(None)  # the summary or error on screen, to say again (relang)
    review_said = gr.State(None)  # the review's message on screen, likewise
    book_said = gr.State(None)  # the manifest's book line on screen, likewise
    unit.change(lambda u: gr.update(visible=u == "page"), unit, filt, api_visibility="private")
    run.click(
        archive_run,
        [uploads, server, unit, filt, threshold, size, resize, keep_duplicates, caption, trigger,
         show, captions, manifest, ui_lang],
        [status, gallery, hist, download, review, review_gallery, status_said],
        js=BUILD_JS,
        show_progress="hidden",  # the status line is the one progress display
        concurrency_limit=1,
        concurrency_id="archive",
    )
    review_gallery.select(archive_toggle, [review, show, ui_lang], [review_gallery, review],
                          js=UI_LANG_JS, api_visibility="private")
    show.change(archive_show, [review, show, ui_lang], review_gallery, js=UI_LANG_JS,
                api_visibility="private")
    decisions.upload(archive_decisions, [review, decisions, show, ui_lang],
                     [review_gallery, review, review_status, decisions, review_said],
                     js=UI_LANG_JS, api_visibility="private")
    rebuild.click(archive_rebuild, [review, decisions, ui_lang],
                  [download, review_status, review_said],
                  js=UI_LANG_JS, concurrency_limit=4, concurrency_id="archive-review")
    # Enter in the box (a phone keyboard's Go) or the button beside it: a manifest and six
    # small pages at most, two requests at a time per host, so a few at once are cheap
    gr.on([manifest.submit, look.click], archive_look, [manifest, ui_lang],
          [book, book_pages, book_said], js=UI_LANG_JS, show_progress="minimal",
          concurrency_limit=4, concurrency_id="archive-look", api_visibility="private")
    relang.click(archive_relang, [status_said, review_said, review, show, ui_lang],
                 [status, review_status, review_gallery], js=UI_LANG_JS,
                 show_progress="hidden", api_visibility="private")
    relang.click(archive_book_relang, [book_said, ui_lang], book, js=UI_LANG_JS,
                 show_progress="hidden", api_visibility="private")
