"""The Imperial LoRA tab: a prompt in, an 1890-engraving-style image out."""

from __future__ import annotations

import gradio as gr

from lora import ui as lora_ui
from lora.lora_file import BadLoraFile
from ondemand import gpu
from tabs.common import LORA, log, t
from ui_text import UI_LANG_JS, sayer, words


@gpu(duration=lora_ui.gpu_duration)
def _lora_generate(prompt, negative, scale, steps, guidance, seed, size, few_step, base, lora,
                   ui_lang):
    return lora_ui.generate_for_ui(prompt, negative, scale, steps, guidance, seed, size,
                                   few_step, base, lora, say=sayer(ui_lang))


def _words(said: lora_ui.Said | None, ui_lang: str) -> str:
    """A kept sentence in ``ui_lang``; "" for none."""
    return words([said], sayer(ui_lang)) if said else ""


def _note(said: lora_ui.Said | None, ui_lang: str) -> str:
    """The warning under the upload box: the sentence after a sign."""
    return "⚠ " + _words(said, ui_lang) if said else ""


def lora_run(prompt, negative="", scale=0.8, steps=30, guidance=7.0, seed=-1, size="1024",
             few_step=False, style_hub="", style_file=None, gallery=None, ui_lang="en"):
    """One image per click. Returns (results, message, said): the results gallery with the
    new image first, each captioned with its settings; a plain sentence when no image could
    be made (empty otherwise); that sentence as a code, for a language switch (a State, which
    the API does not show)."""
    gallery = list(gallery or [])
    code = lora_ui.check_request(prompt) or (None if LORA.can_run else "base")
    if code:
        said = (f"lora_err_{code}", {})
        return gallery, _words(said, ui_lang), said
    try:
        lora_ui.check_style_file(style_file)
        style = lora_ui.choose_style(style_file, style_hub, LORA)
        image, caption = _lora_generate(prompt, negative, scale, int(steps), guidance,
                                        int(seed), int(size), few_step, None, style, ui_lang)
    except Exception as exc:  # noqa: BLE001 - one plain sentence on screen, the detail in the log
        log.warning("no image: %s", exc, exc_info=not isinstance(exc, BadLoraFile))
        said = lora_ui.error_said(exc)
        return gallery, _words(said, ui_lang), said
    return [(image, caption)] + gallery, "", None


def lora_check_style(style_file, ui_lang):
    """On upload (or clear): the file's format, or why it cannot be used (and it is set
    aside). Returns (style line, the file or none, the note under the upload box), then the
    line and the note as codes for a language switch."""
    configured = (lora_ui.status_keys(LORA)[1], {"lora": LORA.lora or ""})
    if not style_file:
        return _words(configured, ui_lang), None, "", configured, None
    try:
        info = lora_ui.check_style_file(style_file)
    except BadLoraFile as exc:
        log.info("style LoRA refused: %s", exc)
        said = lora_ui.error_said(exc)
        return _words(configured, ui_lang), None, _note(said, ui_lang), configured, said
    line = ("lora_style_upload_ok", {"name": info.path.name, "format": info.format})
    return _words(line, ui_lang), style_file, "", line, None


def lora_relang(message_said, style_said, note_said, ui_lang):
    """After a language switch: the sentences a click left on screen, said again; what no
    click wrote (a gr.I18n label) follows the switch by itself and is left alone."""
    return (gr.skip() if message_said is None else _words(message_said, ui_lang),
            gr.skip() if style_said is None else _words(style_said, ui_lang),
            gr.skip() if note_said is None else _note(note_said, ui_lang))


def lora_tab(ui_lang: gr.Radio, relang: gr.Button) -> None:
    """The tab's widgets and events; ``relang`` is clicked after a language switch."""
    gr.Markdown(t("lora_intro"))
    base_key, style_key = lora_ui.status_keys(LORA)
    gr.Markdown(t(base_key), elem_id="lora-base")
    style_line = gr.Markdown(t(style_key), elem_id="lora-style")
    # What the clicks last said, as codes (lora_ui.Said), to say again in another language.
    message_said, style_said, note_said = gr.State(None), gr.State(None), gr.State(None)
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
                                       placeholder=t("lora_style_hub_placeholder"),
                                       elem_id="lora-style-hub")
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
    checked = [style_line, style_file, style_note, style_said, note_said]
    for event in (style_file.upload, style_file.clear):
        event(lora_check_style, [style_file, ui_lang], checked, js=UI_LANG_JS,
              api_visibility="private")
    run.click(
        lora_run,
        [prompt, negative, scale, steps, guidance, seed, size, few_step, style_hub, style_file,
         gallery, ui_lang],
        [gallery, message, message_said],
        js=UI_LANG_JS,
        concurrency_limit=1,
        concurrency_id="lora",
    )
    relang.click(lora_relang, [message_said, style_said, note_said, ui_lang],
                 [message, style_line, style_note], js=UI_LANG_JS, show_progress="hidden",
                 api_visibility="private")
