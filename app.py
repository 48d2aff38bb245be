"""Borde: one Gradio app over the vet, archive and lora packages.

This file only wires widgets to package functions; the work lives in the
packages, which never import gradio.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

if os.environ.get("SPACES_ZERO_GPU"):  # ZeroGPU wants spaces imported before torch
    import spaces  # noqa: F401

import gradio as gr
import pandas as pd

from archive import ArchiveError, serverpath
from archive import ui as archive_ui
from archive.caption import DEFAULT_CAPTION
from lora import ui as lora_ui
from ondemand import gpu
from vet import ui as vet_ui

STRINGS = json.loads((Path(__file__).with_name("ui_strings.json")).read_text(encoding="utf-8"))
I18N = gr.I18n(**STRINGS)

MAX_FILE_SIZE = os.environ.get("BORDE_MAX_UPLOAD", "2gb")
QUEUE_MAX = int(os.environ.get("BORDE_QUEUE_MAX", "16"))
MAX_PAGES = int(os.environ.get("BORDE_MAX_PAGES", "3000"))
# Uploads and outputs older than an hour are swept every hour.
DELETE_CACHE = (3600, 3600)

t = I18N


@gpu(duration=30)
def _vet_one(photo, lang):
    return vet_ui.triage_one_for_ui(photo, lang)


@gpu(duration=lambda files, lang: 10 + 2 * len(files or []))
def _vet_many(files, lang):
    return vet_ui.triage_many_for_ui(files, lang)


def vet_run(photo, lang):
    """One photo: the label with percentages, the urgency badge, the advice, the heatmap."""
    try:
        out = _vet_one(photo, lang)
    except (RuntimeError, OSError, ValueError) as exc:
        raise gr.Error(str(exc)) from None
    return out["label"], out["badge"], out["advice"], out["heatmap"]


def vet_run_herd(files, lang):
    """Many photos: a red banner and red rows first for notifiable suspicions, then the rest."""
    try:
        herd = _vet_many([getattr(f, "name", f) for f in files or []], lang)
    except (RuntimeError, OSError, ValueError) as exc:
        raise gr.Error(str(exc)) from None
    df = pd.DataFrame(herd["rows"], columns=herd["headers"])
    red = set(herd["red"])
    styled = df.style.apply(
        lambda row: ["background-color:#ffcdd2;color:#b71c1c;font-weight:600"
                     if row.name in red else ""] * len(row), axis=1)
    return herd["alert"], styled


def vet_tab() -> None:
    gr.Markdown(t("vet_intro"))
    lang = gr.Radio([("English", "en"), ("Español", "es")], value="en", label=t("vet_lang"))
    with gr.Tabs():
        with gr.Tab(t("vet_one")), gr.Row():
            with gr.Column():
                photo = gr.Image(label=t("vet_photo"), type="filepath",
                                 sources=["upload", "webcam", "clipboard"], height=320,
                                 elem_id="vet-photo")
                run = gr.Button(t("vet_run"), variant="primary")
                gr.Markdown(t("vet_tips"))
                examples = vet_ui.example_photos()
                if examples:
                    gr.Examples(examples, [photo], label=t("vet_examples"))
            with gr.Column():
                badge = gr.HTML()
                label = gr.Label(label=t("vet_label"), num_top_classes=3)
                advice = gr.Markdown()
                heatmap = gr.Image(label=t("vet_heatmap"), type="pil", interactive=False)
        with gr.Tab(t("vet_herd")):
            files = gr.File(label=t("vet_photos"), file_count="multiple", file_types=["image"],
                            elem_id="vet-herd")
            run_herd = gr.Button(t("vet_run_herd"), variant="primary")
            alert = gr.HTML()
            herd = gr.Dataframe(label=t("vet_table"), wrap=True, elem_id="vet-herd-table")
    run.click(vet_run, [photo, lang], [label, badge, advice, heatmap],
              concurrency_limit=4, concurrency_id="vet")
    run_herd.click(vet_run_herd, [files, lang], [alert, herd], concurrency_limit=4,
                   concurrency_id="vet")


def _archive_pending(status: str, gallery=()) -> tuple:
    """The tab's six outputs before a zip exists: no histogram, zip, review or tiles."""
    return status, list(gallery), None, None, None, []


def archive_run(uploads, server, unit, filt, threshold, size, resize, keep_duplicates, caption,
                trigger, show, captions=False, progress=gr.Progress()):
    """Stream a dataset build into the tab: status, crops, histogram and zip, then the review."""
    try:
        paths = [Path(f) for f in uploads or []]
        paths += [serverpath.resolve_choice(c) for c in server or []]
    except ArchiveError as exc:
        yield _archive_pending(f"**{exc}**")
        return
    try:
        cut = float(threshold) if str(threshold or "").strip() else None
    except ValueError:
        message = f"**Threshold must be a number, or empty for the filter's own: {threshold!r}**"
        yield _archive_pending(message)
        return
    options = dict(unit=unit, filter=filt if unit == "page" else "figures", threshold=cut,
                   size=int(size), resize=resize or None, keep_duplicates=bool(keep_duplicates),
                   caption=caption, trigger=(trigger or "").strip() or None, max_pages=MAX_PAGES)
    try:
        for snap in archive_ui.run_job(paths, **options):
            if snap.error:
                yield _archive_pending(f"**{snap.error}**", snap.gallery)
                return
            if snap.total:
                progress((snap.done, snap.total), desc=f"{snap.pages_per_s:.1f} pages/s")
            if snap.zip_path is None:
                yield _archive_pending(snap.status, snap.gallery)
                continue
            status = snap.status
            if captions:  # the model's captions, written into the zip before it is offered
                yield _archive_pending(f"{status} Captioning the crops…", snap.gallery)
                status = f"{status} {archive_ui.caption_zip(snap.zip_path)}"
            review = archive_ui.start_review(snap.zip_path)
            tiles = archive_ui.review_gallery(review, show)
            yield status, snap.gallery, snap.histogram, str(snap.zip_path), review, tiles
    except ArchiveError as exc:
        yield _archive_pending(f"**{exc}**")


def archive_toggle(review, show, evt: gr.SelectData):
    """A click on a crop flips keep/drop; the gallery redraws with the new look."""
    if review is None:
        return [], review
    archive_ui.toggle(review, evt.index)
    return archive_ui.review_gallery(review, show), review


def archive_show(review, show):
    return [] if review is None else archive_ui.review_gallery(review, show)


def archive_rebuild(review):
    """The curated zip from the build's own bytes, offered as the download."""
    if review is None:
        raise gr.Error("Build a dataset first; then review its crops and rebuild.")
    try:
        path, message = archive_ui.rebuild(review)
    except ArchiveError as exc:
        raise gr.Error(str(exc)) from None
    return str(path), message


def archive_tab() -> None:
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
                size = gr.Dropdown([512, 768, 1024], value=1024, label=t("archive_size"))
                resize = gr.Dropdown([(t("archive_resize_auto"), ""), "bucket", "pad", "crop",
                                      "stretch"], value="", label=t("archive_resize"))
            keep_duplicates = gr.Checkbox(value=False, label=t("archive_keep_duplicates"))
            caption = gr.Textbox(value=DEFAULT_CAPTION, label=t("archive_caption"))
            trigger = gr.Textbox(label=t("archive_trigger"), placeholder="imperial")
            captions = gr.Checkbox(value=False, label=t("archive_captioner"),
                                   info=archive_ui.captioner.DEFAULT_MODEL)
            run = gr.Button(t("archive_run"), variant="primary")
            gr.Markdown(t("archive_cli_hint"))
            gr.Markdown(f"⬆ max {MAX_FILE_SIZE} · {MAX_PAGES} pages "
                        "(`BORDE_MAX_UPLOAD`, `BORDE_MAX_PAGES`)")
        with gr.Column():
            status = gr.Markdown()
            gallery = gr.Gallery(label=t("archive_gallery"), columns=4, height=360,
                                 elem_id="archive-gallery", interactive=False)
            hist = gr.Image(label=t("archive_hist"), type="pil", interactive=False)
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
            review_status = gr.Markdown(elem_id="archive-review-status")
    review = gr.State(None)  # per browser session: two curators never share a review
    unit.change(lambda u: gr.update(visible=u == "page"), unit, filt, api_visibility="private")
    run.click(
        archive_run,
        [uploads, server, unit, filt, threshold, size, resize, keep_duplicates, caption, trigger,
         show, captions],
        [status, gallery, hist, download, review, review_gallery],
        concurrency_limit=1,
        concurrency_id="archive",
    )
    review_gallery.select(archive_toggle, [review, show], [review_gallery, review],
                          api_visibility="private")
    show.change(archive_show, [review, show], review_gallery, api_visibility="private")
    rebuild.click(archive_rebuild, review, [download, review_status], concurrency_limit=4,
                  concurrency_id="archive-review")


@gpu(duration=lora_ui.gpu_duration)
def _lora_generate(prompt, negative, scale, steps, guidance, seed, size, few_step):
    return lora_ui.generate_for_ui(prompt, negative, scale, steps, guidance, seed, size, few_step)


def lora_run(prompt, negative, scale, steps, guidance, seed, size, few_step, gallery):
    """One image per click, added in front of the earlier ones."""
    try:
        image, caption = _lora_generate(
            prompt, negative, scale, int(steps), guidance, int(seed), int(size), few_step
        )
    except (RuntimeError, ValueError) as exc:
        raise gr.Error(str(exc)) from None
    return [(image, caption)] + list(gallery or [])


def lora_tab() -> None:
    gr.Markdown(t("lora_intro"))
    gr.Markdown(lora_ui.model_status())
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
                size = gr.Dropdown(lora_ui.SIZES, value=1024, label=t("lora_size"))
            few_step = gr.Checkbox(value=False, label=t("lora_few_step"))
            run = gr.Button(t("lora_run"), variant="primary")
            gr.Examples([[p] for p in lora_ui.EXAMPLE_PROMPTS], [prompt], label=t("lora_examples"))
        with gr.Column():
            gallery = gr.Gallery(label=t("lora_gallery"), columns=2, height=560,
                                 interactive=False)  # results only: nothing to upload
    dice.click(lora_ui.random_seed, None, seed, api_visibility="private")
    run.click(
        lora_run,
        [prompt, negative, scale, steps, guidance, seed, size, few_step, gallery],
        gallery,
        concurrency_limit=1,
        concurrency_id="lora",
    )


def build_app() -> gr.Blocks:
    """The Blocks tree; built without touching CUDA so ZeroGPU can start it."""
    with gr.Blocks(title="Borde", delete_cache=DELETE_CACHE) as demo:
        gr.Markdown(t("title"))
        with gr.Tabs():
            with gr.Tab(t("tab_vet"), id="vet"):
                vet_tab()
            with gr.Tab(t("tab_archive"), id="archive"):
                archive_tab()
            with gr.Tab(t("tab_lora"), id="lora"):
                lora_tab()
        gr.Markdown(t("footer"))
    demo.queue(max_size=QUEUE_MAX, default_concurrency_limit=1)
    return demo


def launch_kwargs() -> dict:
    """What launch() needs; GRADIO_SERVER_NAME/PORT are read by gradio itself."""
    return dict(i18n=I18N, max_file_size=MAX_FILE_SIZE, theme=gr.themes.Soft())


if __name__ == "__main__":
    build_app().launch(**launch_kwargs())
