"""The Imperial LoRA tab: a prompt in, an 1890-engraving-style image out."""

from __future__ import annotations

import gradio as gr

from lora import ui as lora_ui
from lora.lora_file import BadLoraFile
from ondemand import gpu
from tabs.common import LORA, log, t
from ui_text import UI_LANG_JS, sayer


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


def lora_tab(ui_lang: gr.Radio, relang: gr.Button) -> None:
    """The tab's widgets and events; ``relang`` is clicked after a language switch."""
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
