"""The Archive -> Dataset tab: scans in, a zip of their illustrations out, then the review."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from archive import ArchiveError, serverpath
from archive import ui as archive_ui
from archive.caption import DEFAULT_CAPTION
from tabs.common import MAX_PAGES, note, t
from ui_text import UI_LANG_JS, sayer


def _archive_pending(status: str, gallery=()) -> tuple:
    """The tab's six outputs before a zip exists: no histogram, zip, review or tiles."""
    return status, list(gallery), None, None, None, []


def archive_run(uploads, server, unit, filt, threshold, size, resize, keep_duplicates, caption,
                trigger, show, captions=False, ui_lang="en"):
    """Build a dataset, streaming. Returns (status, crops, scores, zip, review): a status line
    (HTML: the progress, then the summary or the error), the latest crops with their scores,
    the score histogram, the dataset zip, and the most doubtful crops for the review."""
    s = sayer(ui_lang)
    try:
        paths = [Path(f) for f in uploads or []]
        paths += [serverpath.resolve_choice(c) for c in server or []]
    except ArchiveError as exc:
        yield _archive_pending(note(str(exc), "error"))
        return
    try:
        cut = float(threshold) if str(threshold or "").strip() else None
    except ValueError:
        yield _archive_pending(note(s("archive_bad_threshold", value=repr(threshold)), "error"))
        return
    options = dict(unit=unit, filter=filt if unit == "page" else "figures", threshold=cut,
                   size=int(size), resize=resize or None, keep_duplicates=bool(keep_duplicates),
                   caption=caption, trigger=(trigger or "").strip() or None, max_pages=MAX_PAGES)
    picker = serverpath.data_dir() is not None
    for snap in archive_ui.run_job(paths, s, server_picker=picker, **options):
        if snap.error:
            yield _archive_pending(note(snap.error, "error"), snap.gallery)
            return
        if snap.zip_path is None:
            yield _archive_pending(snap.status, snap.gallery)
            continue
        status = snap.status
        if captions:  # the model's captions, written into the zip before it is offered
            captioning = s("archive_captioning")
            yield _archive_pending(f"{status} {captioning}", snap.gallery)
            status = f"{status} {archive_ui.caption_zip(snap.zip_path)}"
        review = archive_ui.start_review(snap.zip_path)
        tiles = archive_ui.review_gallery(review, s, show)
        yield (note(status, "done"), snap.gallery, snap.histogram, str(snap.zip_path),
               review, tiles)


KEEP_HOURS = f"{archive_ui.JOB_KEEP_S / 3600:g}"


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


def _take_decisions(review, decisions, s) -> str:
    """A decisions file joined to the review; the sentence says what it did (or why not)."""
    try:
        return archive_ui.take_decisions(review, decisions, s)
    except ArchiveError as exc:
        return s("archive_decisions_bad", name=Path(decisions).name, detail=str(exc))


def archive_decisions(review, decisions, show, ui_lang):
    """An uploaded decisions file joins the review; the tiles redraw, the upload clears."""
    s = sayer(ui_lang)
    if review is None or archive_ui.build_gone(review):
        said = (s("archive_build_gone", keep_hours=KEEP_HOURS) if review
                else s("archive_rebuild_first"))
        return [], None, said, None
    said = _take_decisions(review, decisions, s) if decisions else ""
    return archive_ui.review_gallery(review, s, show), review, said, None


def archive_rebuild(review=None, decisions=None, ui_lang="en"):
    """The curated zip from the build's own bytes, with ``decisions`` (a CSV file, for API
    callers) taken first. Returns (zip, message): the new zip (or the earlier one, unchanged,
    when there is nothing to rebuild) and what changed, in words."""
    s = sayer(ui_lang)
    if review is None:
        return gr.skip(), s("archive_rebuild_first")
    if archive_ui.build_gone(review):
        return gr.skip(), s("archive_build_gone", keep_hours=KEEP_HOURS)
    said = _take_decisions(review, decisions, s) if decisions else ""
    try:
        path, message = archive_ui.rebuild(review, s)
    except ArchiveError as exc:
        return gr.skip(), " ".join(w for w in (said, s("archive_failed", detail=str(exc))) if w)
    return str(path), " ".join(w for w in (message, said) if w)


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
            units = [(t("archive_unit_figure"), "figure"), (t("archive_unit_page"), "page")]
            unit = gr.Radio(units,
                            value="figure", label=t("archive_unit"), info=t("archive_unit_info"))
            gr.Markdown(t("archive_accuracy"))
            filt = gr.Radio(["figures", "layout", "std"], value="figures", visible=False,
                            label=t("archive_filter"), info=t("archive_filter_info"))
            threshold = gr.Textbox(value="", label=t("archive_threshold"), placeholder="auto")
            with gr.Row():
                size = gr.Dropdown(["512", "768", "1024"], value="1024", label=t("archive_size"))
                resize = gr.Dropdown([(t("archive_resize_auto"), ""), "bucket", "pad", "crop",
                                      "stretch"], value="", label=t("archive_resize"))
            keep_duplicates = gr.Checkbox(value=False, label=t("archive_keep_duplicates"))
            caption = gr.Textbox(value=DEFAULT_CAPTION, label=t("archive_caption"))
            trigger = gr.Textbox(value="", label=t("archive_trigger"), placeholder="imperial")
            captions = gr.Checkbox(value=False, label=t("archive_captioner"),
                                   info=archive_ui.captioner.DEFAULT_MODEL)
            run = gr.Button(t("archive_run"), variant="primary")
            gr.Markdown(t("archive_cli_hint"))
            gr.Markdown(t("archive_limits"), elem_id="archive-limits")
        with gr.Column():
            status = gr.HTML(label="status", show_label=False, elem_id="archive-status")
            gallery = gr.Gallery(label=t("archive_gallery"), columns=3, height=360,
                                 object_fit="contain", elem_id="archive-gallery",
                                 interactive=False)
            hist = gr.Image(label=t("archive_hist"), type="pil", interactive=False,
                            elem_id="archive-hist")
            download = gr.File(label=t("archive_download"), elem_id="archive-download")
    with gr.Accordion(t("archive_review"), open=True):
        gr.Markdown(t("archive_review_info"))
        show = gr.Slider(8, 400, value=archive_ui.REVIEW_SHOW, step=8,
                         label=t("archive_review_show"))
        review_gallery = gr.Gallery(label=t("archive_review_gallery"), columns=6, height=520,
                                    allow_preview=False, interactive=False, object_fit="contain",
                                    elem_id="archive-review")
        with gr.Row():
            rebuild = gr.Button(t("archive_rebuild"), variant="primary", elem_id="archive-rebuild")
            review_status = gr.Markdown(label="message", elem_id="archive-review-status")
        decisions = gr.File(label=t("archive_decisions_upload"), file_types=[".csv"],
                            type="filepath", elem_id="archive-decisions")
    review = gr.State(None)  # per browser session: two curators never share a review
    unit.change(lambda u: gr.update(visible=u == "page"), unit, filt, api_visibility="private")
    run.click(
        archive_run,
        [uploads, server, unit, filt, threshold, size, resize, keep_duplicates, caption, trigger,
         show, captions, ui_lang],
        [status, gallery, hist, download, review, review_gallery],
        js=UI_LANG_JS,
        show_progress="hidden",  # the status line is the one progress display
        concurrency_limit=1,
        concurrency_id="archive",
    )
    review_gallery.select(archive_toggle, [review, show, ui_lang], [review_gallery, review],
                          js=UI_LANG_JS, api_visibility="private")
    show.change(archive_show, [review, show, ui_lang], review_gallery, js=UI_LANG_JS,
                api_visibility="private")
    decisions.upload(archive_decisions, [review, decisions, show, ui_lang],
                     [review_gallery, review, review_status, decisions], js=UI_LANG_JS,
                     api_visibility="private")
    rebuild.click(archive_rebuild, [review, decisions, ui_lang], [download, review_status],
                  js=UI_LANG_JS, concurrency_limit=4, concurrency_id="archive-review")
