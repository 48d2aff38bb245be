"""Borde: one Gradio app over the vet, archive and lora packages.

This file only wires widgets to package functions; the work lives in the
packages, which never import gradio. Labels are ``gr.I18n`` keys; the words a
click writes come back in the page's language, which every such event sends as
its last input, ``ui_lang`` (see ``ui_text``).
"""

from __future__ import annotations

import html
import json
import logging
import os
import tempfile
import uuid
from pathlib import Path

if os.environ.get("SPACES_ZERO_GPU"):  # ZeroGPU wants spaces imported before torch
    import spaces  # noqa: F401

import gradio as gr

import tempfolders
import ui_text
from archive import ArchiveError, serverpath
from archive import ui as archive_ui
from archive.caption import DEFAULT_CAPTION
from lora import ui as lora_ui
from lora.lora_file import BadLoraFile
from ondemand import gpu, warm_imports, zero_gpu_enabled
from ui_text import UI_LANG_JS, say, sayer
from vet import ui as vet_ui

log = logging.getLogger("borde.app")
ROOT = Path(__file__).parent
MAX_FILE_SIZE = os.environ.get("BORDE_MAX_UPLOAD", "2gb")
QUEUE_MAX = int(os.environ.get("BORDE_QUEUE_MAX", "16"))
MAX_PAGES = int(os.environ.get("BORDE_MAX_PAGES", "3000"))
# Uploads and outputs older than an hour are swept every hour.
DELETE_CACHE = (3600, 3600)
LORA = lora_ui.model_state()  # which base and style LoRA are there, known before any click
FACTS = {"max_upload": ui_text.size_words(MAX_FILE_SIZE), "max_pages": MAX_PAGES,
         "base": LORA.base, "lora": LORA.lora or ""}
I18N = gr.I18n(**ui_text.i18n_tables(FACTS))
t = I18N
# Imported in the background at start-up, so no tab's first answer pays for them.
WARM_IMPORTS = ["torch", "transformers.modeling_utils", "vet.modeling_efficientnet_lite",
                "vet.heatmap", "pymupdf", "cv2", "imagehash", "matplotlib.figure"]
if LORA.can_run:
    WARM_IMPORTS += ["diffusers.pipelines.stable_diffusion_xl.pipeline_stable_diffusion_xl",
                     "peft"]


def _downloads(files: dict[str, str]) -> list[str]:
    """Small result files in a fresh folder; folders older than an hour are swept."""
    root = Path(tempfile.gettempdir()) / "borde-downloads"
    root.mkdir(exist_ok=True)
    tempfolders.sweep(root, "", DELETE_CACHE[1])
    folder = root / uuid.uuid4().hex
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]


def _note(text: str, cls: str = "note") -> str:
    return f'<p class="borde-{cls}">{html.escape(text)}</p>'


# --- Vet Scanner ---------------------------------------------------------------------------


@gpu(duration=30)
def _vet_one(photo, lang):
    return vet_ui.triage_one_for_ui(photo, lang)


@gpu(duration=lambda files, lang: 10 + 2 * len(files or []))
def _vet_many(files, lang):
    return vet_ui.triage_many_for_ui(files, lang)


def vet_run(photo, lang="auto", ui_lang="en"):
    """One photo. Returns (conditions, badge, advice, heatmap): the likely conditions with
    their probabilities (or the status in words), the urgency badge (HTML), the advice
    (Markdown) and where the model looked (an image, or none)."""
    lang = ui_text.answer_lang(lang, ui_lang)
    try:
        out = _vet_one(photo, lang)
    except (RuntimeError, OSError, ValueError):
        log.exception("vet model failed")
        return None, "", say(lang, "vet_err_model"), gr.update(value=None, visible=False)
    heat = out["heatmap"]
    return out["label"], out["badge"], out["advice"], gr.update(value=heat,
                                                                visible=heat is not None)


def vet_run_herd(files, lang="auto", ui_lang="en"):
    """Many photos. Returns (alert, table, downloads): a red banner in the answer's language
    for notifiable suspicions (HTML, empty if none), the table with those rows first (HTML) and
    herd.csv plus herd.json with every field of every answer."""
    lang = ui_text.answer_lang(lang, ui_lang)
    paths = [getattr(f, "name", f) for f in files or []]
    if not paths:
        return "", _note(say(lang, "vet_herd_empty")), None
    try:
        herd = _vet_many(paths, lang)
    except (RuntimeError, OSError, ValueError):
        log.exception("vet model failed")
        return "", _note(say(lang, "vet_err_model"), "error"), None
    return herd["alert"], herd["table"], _downloads({"herd.csv": herd["csv"],
                                                      "herd.json": herd["json"]})


def vet_tab(ui_lang) -> None:
    gr.Markdown(t("vet_intro"))
    lang = gr.Radio([(t("vet_lang_auto"), "auto"), ("English", "en"), ("Español", "es")],
                    value="auto", label=t("vet_lang"), elem_id="vet-lang")
    with gr.Tabs():
        with gr.Tab(t("vet_one")):
            with gr.Row():
                with gr.Column():
                    photo = gr.Image(label=t("vet_photo"), type="filepath",
                                     sources=["upload", "webcam", "clipboard"], height=320,
                                     placeholder=t("vet_drop"), elem_id="vet-photo")
                    run = gr.Button(t("vet_run"), variant="primary", elem_id="vet-run")
                with gr.Column():
                    badge = gr.HTML(label="badge", show_label=False, elem_id="vet-badge")
                    label = gr.Label(label=t("vet_label"), num_top_classes=3,
                                     elem_id="vet-label")
                    advice = gr.Markdown(label="advice", elem_id="vet-advice")
                    heatmap = gr.Image(label=t("vet_heatmap"), type="pil", interactive=False,
                                       elem_id="vet-heatmap")
            # Below the answer, so a phone shows the answer right under the button.
            gr.Markdown(t("vet_tips"))
            examples = vet_ui.example_photos()
            if examples:
                gr.Examples(examples, [photo], label=t("vet_examples"))
        with gr.Tab(t("vet_herd")):
            files = gr.File(label=t("vet_photos"), file_count="multiple", file_types=["image"],
                            elem_id="vet-herd")
            run_herd = gr.Button(t("vet_run_herd"), variant="primary")
            alert = gr.HTML(label="alert", show_label=False)
            herd = gr.HTML(label="table", show_label=False, elem_id="vet-herd-table")
            herd_files = gr.File(label=t("vet_downloads"), file_count="multiple",
                                 interactive=False, elem_id="vet-herd-files")
    run.click(vet_run, [photo, lang, ui_lang], [label, badge, advice, heatmap], js=UI_LANG_JS,
              scroll_to_output=True, concurrency_limit=4, concurrency_id="vet")
    run_herd.click(vet_run_herd, [files, lang, ui_lang], [alert, herd, herd_files],
                   js=UI_LANG_JS, concurrency_limit=4, concurrency_id="vet")


# --- Archive -> Dataset --------------------------------------------------------------------


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
        yield _archive_pending(_note(str(exc), "error"))
        return
    try:
        cut = float(threshold) if str(threshold or "").strip() else None
    except ValueError:
        yield _archive_pending(_note(s("archive_bad_threshold", value=repr(threshold)), "error"))
        return
    options = dict(unit=unit, filter=filt if unit == "page" else "figures", threshold=cut,
                   size=int(size), resize=resize or None, keep_duplicates=bool(keep_duplicates),
                   caption=caption, trigger=(trigger or "").strip() or None, max_pages=MAX_PAGES)
    picker = serverpath.data_dir() is not None
    for snap in archive_ui.run_job(paths, s, server_picker=picker, **options):
        if snap.error:
            yield _archive_pending(_note(snap.error, "error"), snap.gallery)
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
        yield (_note(status, "done"), snap.gallery, snap.histogram, str(snap.zip_path),
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


def archive_tab(ui_lang) -> None:
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


# --- Imperial LoRA -------------------------------------------------------------------------


@gpu(duration=lora_ui.gpu_duration)
def _lora_generate(prompt, negative, scale, steps, guidance, seed, size, few_step, base, lora,
                   ui_lang):
    return lora_ui.generate_for_ui(prompt, negative, scale, steps, guidance, seed, size,
                                   few_step, base, lora, say=sayer(ui_lang))


def lora_run(prompt, negative="", scale=0.8, steps=30, guidance=7.0, seed=-1, size="1024",
             few_step=False, style_hub="", style_file=None, gallery=None, ui_lang="en"):
    """One image per click. Returns (results, message): the results gallery with the new
    image first, each captioned with its settings, and a plain sentence when no image could
    be made (empty otherwise)."""
    s = sayer(ui_lang)
    gallery = list(gallery or [])
    code = lora_ui.check_request(prompt) or (None if LORA.can_run else "base")
    if code:
        return gallery, s(f"lora_err_{code}")
    try:
        lora_ui.check_style_file(style_file)
        style = lora_ui.choose_style(style_file, style_hub, LORA)
        image, caption = _lora_generate(prompt, negative, scale, int(steps), guidance,
                                        int(seed), int(size), few_step, None, style, ui_lang)
    except Exception as exc:  # noqa: BLE001 - one plain sentence on screen, the detail in the log
        log.warning("no image: %s", exc, exc_info=not isinstance(exc, BadLoraFile))
        return gallery, s(f"lora_err_{lora_ui.error_code(exc)}")
    return [(image, caption)] + gallery, ""


def lora_check_style(style_file, ui_lang):
    """On upload: the file's format, or why it cannot be used (and it is set aside).
    Returns (style line, the file or none, the note under the upload box)."""
    s = sayer(ui_lang)
    configured = s(lora_ui.status_keys(LORA)[1], lora=LORA.lora or "")
    if not style_file:
        return configured, None, ""
    try:
        info = lora_ui.check_style_file(style_file)
    except BadLoraFile as exc:
        log.info("style LoRA refused: %s", exc)
        return configured, None, "⚠ " + s(f"lora_err_file_{exc.code}")
    return s("lora_style_upload_ok", name=info.path.name, format=info.format), style_file, ""


def lora_tab(ui_lang) -> None:
    gr.Markdown(t("lora_intro"))
    base_key, style_key = lora_ui.status_keys(LORA)
    gr.Markdown(t(base_key), elem_id="lora-base")
    style_line = gr.Markdown(t(style_key), elem_id="lora-style")
    with gr.Row():
        with gr.Column():
            prompt = gr.Textbox(label=t("lora_prompt"), value=lora_ui.EXAMPLE_PROMPTS[0], lines=2)
            negative = gr.Textbox(label=t("lora_negative"), value=lora_ui.DEFAULT_NEGATIVE)
            with gr.Row():
                scale = gr.Slider(0, 1.5, value=0.8, step=0.05, label=t("lora_scale"))
                steps = gr.Slider(1, 60, value=30, step=1, label=t("lora_steps"))
                guidance = gr.Slider(0, 15, value=7, step=0.5, label=t("lora_guidance"))
            with gr.Row():
                seed = gr.Number(value=-1, precision=0, label=t("lora_seed"))
                dice = gr.Button(t("lora_dice"), size="sm")
                size = gr.Dropdown(lora_ui.SIZES, value="1024", label=t("lora_size"))
            few_step = gr.Checkbox(value=False, label=t("lora_few_step"))
            with gr.Accordion(t("lora_style_box"), open=not LORA.lora):
                style_hub = gr.Textbox(value="", label=t("lora_style_hub"),
                                       placeholder="owner/name", elem_id="lora-style-hub")
                style_file = gr.File(label=t("lora_style_file"), file_types=[".safetensors"],
                                     type="filepath", elem_id="lora-style-file")
                style_note = gr.Markdown(elem_id="lora-style-note")
            run = gr.Button(t("lora_run"), variant="primary", interactive=LORA.can_run,
                            elem_id="lora-run")
            gr.Markdown(t("lora_disabled"), visible=not LORA.can_run, elem_id="lora-disabled")
            message = gr.Markdown(label="message", elem_id="lora-message")
            gr.Examples([[p] for p in lora_ui.EXAMPLE_PROMPTS], [prompt], label=t("lora_examples"))
        with gr.Column():
            gallery = gr.Gallery(label=t("lora_gallery"), columns=2, height=560,
                                 interactive=False, elem_id="lora-gallery")  # results only
    dice.click(lora_ui.random_seed, None, seed, api_visibility="private")
    style_file.upload(lora_check_style, [style_file, ui_lang],
                      [style_line, style_file, style_note], js=UI_LANG_JS,
                      api_visibility="private")
    run.click(
        lora_run,
        [prompt, negative, scale, steps, guidance, seed, size, few_step, style_hub, style_file,
         gallery, ui_lang],
        [gallery, message],
        js=UI_LANG_JS,
        concurrency_limit=1,
        concurrency_id="lora",
    )


def build_app() -> gr.Blocks:
    """The Blocks tree; built without touching CUDA so ZeroGPU can start it."""
    with gr.Blocks(title="Borde", delete_cache=DELETE_CACHE) as demo:
        # The page's language, filled in by UI_LANG_JS on every event that writes words.
        ui_lang = gr.Radio(["en", "es"], value="en", visible=False, label="ui_lang")
        gr.Markdown(t("title"))
        with gr.Tabs():
            with gr.Tab(t("tab_vet"), id="vet"):
                vet_tab(ui_lang)
            with gr.Tab(t("tab_archive"), id="archive"):
                archive_tab(ui_lang)
            with gr.Tab(t("tab_lora"), id="lora"):
                lora_tab(ui_lang)
        gr.Markdown(t("footer"))
    demo.queue(max_size=QUEUE_MAX, default_concurrency_limit=1)
    return demo


def head_html() -> str:
    """The script that re-translates what gradio leaves behind after Settings -> Language."""
    table = {lang: {k: ui_text.strings()[lang][k] for k in ui_text.STALE_AFTER_SWITCH}
             for lang in ui_text.LANGS}
    script = (ROOT / "app.js").read_text(encoding="utf-8")
    return f"<script>{script.replace('__BORDE_TABLE__', json.dumps(table))}</script>"


def launch_kwargs() -> dict:
    """What launch() needs; GRADIO_SERVER_NAME/PORT are read by gradio itself."""
    return dict(i18n=I18N, max_file_size=MAX_FILE_SIZE, theme=gr.themes.Soft(),
                css=(ROOT / "app.css").read_text(encoding="utf-8"), head=head_html(),
                # no run history kept in the browser (a shared phone), so no "Runs" link
                footer_links=["api", "gradio", "settings"], run_history=False)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if os.environ.get("BORDE_WARM_IMPORTS", "1") != "0":
        # On ZeroGPU the answers run in a GPU worker: imports only, no CPU warm-up answer.
        warm_imports(WARM_IMPORTS, then=None if zero_gpu_enabled() else vet_ui.warm_up)
    build_app().launch(**launch_kwargs())
