"""The Vet Scanner tab: one photo or a herd, answered in the farmer's language."""

from __future__ import annotations

import gradio as gr

import ui_text
from ondemand import gpu
from tabs.common import downloads, log, note, t
from ui_text import UI_LANG_JS, say
from vet import ui as vet_ui


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
        return "", note(say(lang, "vet_herd_empty")), None
    try:
        herd = _vet_many(paths, lang)
    except (RuntimeError, OSError, ValueError):
        log.exception("vet model failed")
        return "", note(say(lang, "vet_err_model"), "error"), None
    return herd["alert"], herd["table"], downloads({"herd.csv": herd["csv"],
                                                      "herd.json": herd["json"]})


def vet_tab(ui_lang: gr.Radio, relang: gr.Button) -> None:
    """The tab's widgets and events; ``relang`` is clicked after a language switch."""
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
