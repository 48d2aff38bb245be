"""The Vet Scanner tab: one photo or a herd, answered in the farmer's language."""

from __future__ import annotations

import base64
import inspect
from pathlib import Path
from typing import Any

import gradio as gr

import ui_text
from ondemand import gpu
from tabs.common import downloads, log, note, t
from ui_text import UI_LANG_JS, say
from vet import ui as vet_ui

# What a kept answer holds (a gr.State per tab, so a language switch can write it again
# without a model run): {"result": Triage JSON} for one photo, {"results": [...]} for a
# herd, or {"say": key} for a sentence instead of an answer.
Kept = dict[str, Any] | None


def _upload(value: Any) -> tuple[Any, str | None]:
    """(what to read, the name the user gave it) from an input taken without gradio's
    preprocess (``preprocess=False``): its FileData as a dict, or a path when called from
    Python.

    gradio's own preprocess opens the photo with PIL and raises on an empty or corrupt JPEG,
    a PDF or a text file (the tab showed "Error" pills, the API an AppError), and rejects a
    herd file that is not an image; the scanner answers those itself ("could not be read as
    a photo"). gradio still checks that the path is one of its uploads before this runs.
    """
    if not isinstance(value, dict):
        return getattr(value, "name", value), None
    name = Path(value["orig_name"]).name if value.get("orig_name") else None
    url = value.get("url") or ""
    if not value.get("path") and url.startswith("data:"):  # a base64 image, no file
        try:
            return base64.b64decode(url.partition(",")[2]), name
        except ValueError:
            return b"", name  # the scanner's "could not be read", as for an empty file
    return value.get("path"), name


@gpu(duration=30)
def _vet_one(photo, lang, name=None):
    return vet_ui.triage_one_for_ui(photo, lang, name=name)


@gpu(duration=lambda files, lang, names=None: 10 + 2 * len(files or []))
def _vet_many(files, lang, names=None):
    return vet_ui.triage_many_for_ui(files, lang, names=names)


def _heat(image: Any) -> dict:
    return gr.update(value=image, visible=image is not None)


def _one_words(kept: Kept, lang: str) -> tuple:
    """(conditions, badge, advice) for a kept answer, in ``lang``."""
    if kept and "result" in kept:
        out = vet_ui.resay_one(kept["result"], lang)
        return out["label"], out["badge"], out["advice"]
    return None, "", say(lang, kept["say"]) if kept else ""


def _herd_out(herd: dict[str, Any]) -> tuple:
    """(alert, table, downloads) of a herd in words (``vet_ui.herd_words``)."""
    return herd["alert"], herd["table"], downloads({"herd.csv": herd["csv"],
                                                      "herd.json": herd["json"]})


def _herd_words(kept: Kept, lang: str) -> tuple:
    """(alert, table, downloads) for a kept herd, in ``lang``."""
    if kept and "results" in kept:
        return _herd_out(vet_ui.resay_herd(kept["results"], lang))
    if kept:
        return "", note(say(lang, kept["say"]), kept.get("cls", "note")), None
    return "", "", None


def vet_answer(photo, lang="auto", ui_lang="en"):
    """One photo: ``vet_run``'s four answers, then what the tab keeps to write them again."""
    lang = ui_text.answer_lang(lang, ui_lang)
    try:
        source, name = _upload(photo) if photo is not None else (None, None)
        out = _vet_one(source, lang, name)
    except (RuntimeError, OSError, ValueError):
        log.exception("vet model failed")
        kept = {"say": "vet_err_model"}
        return (*_one_words(kept, lang), gr.update(value=None, visible=False), kept)
    return out["label"], out["badge"], out["advice"], _heat(out["heatmap"]), {
        "result": out["result"]}


def vet_run(photo, lang="auto", ui_lang="en"):
    """One photo. Returns (conditions, badge, advice, heatmap): the likely conditions with
    their probabilities (or the status in words), the urgency badge (HTML), the advice
    (Markdown) and where the model looked (an image, or none). A file that is not a photo
    is an answer too: "could not be read as a photo", in the answer's language."""
    return vet_answer(photo, lang, ui_lang)[:4]


def vet_answer_herd(files, lang="auto", ui_lang="en"):
    """Many photos: ``vet_run_herd``'s three answers, then what the tab keeps."""
    lang = ui_text.answer_lang(lang, ui_lang)
    uploads = [_upload(f) for f in files or []]
    if not uploads:
        kept = {"say": "vet_herd_empty"}
        return (*_herd_words(kept, lang), kept)
    try:
        herd = _vet_many([f for f, _ in uploads], lang, [n for _, n in uploads])
    except (RuntimeError, OSError, ValueError):
        log.exception("vet model failed")
        kept = {"say": "vet_err_model", "cls": "error"}
        return (*_herd_words(kept, lang), kept)
    return (*_herd_out(herd), {"results": herd["results"]})


def vet_run_herd(files, lang="auto", ui_lang="en"):
    """Many photos. Returns (alert, table, downloads): a red banner in the answer's language
    for notifiable suspicions (HTML, empty if none), the table with those rows first (HTML) and
    herd.csv plus herd.json with every field of every answer; a file that is not a photo
    gets its row ("Photo not read") and the others are answered."""
    return vet_answer_herd(files, lang, ui_lang)[:3]


def vet_resay(one: Kept, herd: Kept, lang="auto", ui_lang="en") -> tuple:
    """What is on screen written again in the answer's language (the radio's, or the
    page's): (conditions, badge, advice, alert, table, downloads). No model run."""
    lang = ui_text.answer_lang(lang, ui_lang)
    keep = gr.update()
    words = _one_words(one, lang) if one else (keep,) * 3
    return (*words, *(_herd_words(herd, lang) if herd else (keep,) * 3))


def vet_relang(one: Kept, herd: Kept, lang="auto", ui_lang="en") -> tuple:
    """After a page language switch: :func:`vet_resay` only when the answer follows the
    page ("auto"); an answer language the farmer picked stays."""
    if lang not in (None, "", "auto"):
        return (gr.update(),) * 6
    return vet_resay(one, herd, lang, ui_lang)


def _forget_one() -> tuple:
    """A new photo (or none): the old answer goes, so it is never seen beside it."""
    return None, "", "", gr.update(value=None, visible=True), None


def _forget_herd() -> tuple:
    return "", "", None, None


def vet_tab(ui_lang: gr.Radio, relang: gr.Button) -> None:
    """The tab's widgets and events; ``relang`` is clicked after a language switch."""
    gr.Markdown(t("vet_intro"))
    lang = gr.Radio([(t("vet_lang_auto"), "auto"), ("English", "en"), ("Español", "es")],
                    value="auto", label=t("vet_lang"), elem_id="vet-lang")
    one, many = gr.State(None), gr.State(None)
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
    one_out, herd_out = [label, badge, advice, heatmap], [alert, herd, herd_files]
    # preprocess=False: the scanner, not gradio, says what is wrong with a file (_upload)
    run.click(vet_answer, [photo, lang, ui_lang], [*one_out, one], js=UI_LANG_JS,
              preprocess=False, api_name="vet_run", api_description=inspect.getdoc(vet_run),
              scroll_to_output=True, concurrency_limit=4, concurrency_id="vet")
    run_herd.click(vet_answer_herd, [files, lang, ui_lang], [*herd_out, many], js=UI_LANG_JS,
                   preprocess=False,
                   api_name="vet_run_herd", api_description=inspect.getdoc(vet_run_herd),
                   concurrency_limit=4, concurrency_id="vet")
    # upload, webcam, clipboard, an example's click and the clear (x) all change the photo
    photo.change(_forget_one, None, [*one_out, one], queue=False, show_progress="hidden",
                 api_visibility="private")
    files.change(_forget_herd, None, [*herd_out, many], queue=False, show_progress="hidden",
                 api_visibility="private")
    words = [one, many, lang, ui_lang]
    lang.change(vet_resay, words, [label, badge, advice, *herd_out], js=UI_LANG_JS,
                show_progress="hidden", api_visibility="private")
    relang.click(vet_relang, words, [label, badge, advice, *herd_out], js=UI_LANG_JS,
                 show_progress="hidden", api_visibility="private")
