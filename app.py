"""Borde: one Gradio app over the vet, archive and lora packages.

This file only wires widgets to package functions; the work lives in the
packages, which never import gradio.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import gradio as gr

STRINGS = json.loads((Path(__file__).with_name("ui_strings.json")).read_text(encoding="utf-8"))
I18N = gr.I18n(**STRINGS)

MAX_FILE_SIZE = os.environ.get("BORDE_MAX_UPLOAD", "2gb")
QUEUE_MAX = int(os.environ.get("BORDE_QUEUE_MAX", "16"))
# Uploads and outputs older than an hour are swept every hour.
DELETE_CACHE = (3600, 3600)

t = I18N


def vet_tab() -> None:
    gr.Markdown(t("vet_intro"))
    gr.Markdown(t("vet_shell"))


def archive_tab() -> None:
    gr.Markdown(t("archive_intro"))
    gr.Markdown(t("archive_shell"))


def lora_tab() -> None:
    gr.Markdown(t("lora_intro"))
    gr.Markdown(t("lora_shell"))


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
