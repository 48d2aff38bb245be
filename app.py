"""Borde: one Gradio app over the vet, archive and lora packages.

This file only wires widgets to package functions; the work lives in the
packages, which never import gradio. Labels are ``gr.I18n`` keys; the words a
click writes come back in the page's language, which every such event sends as
its last input, ``ui_lang`` (see ``ui_text``).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

if __name__ == "__main__":  # before tabs.common, whose start-up check of the base logs
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
if os.environ.get("SPACES_ZERO_GPU"):  # ZeroGPU wants spaces imported before torch
    import spaces  # noqa: F401

import gradio as gr

import ui_text
from ondemand import warm_imports, zero_gpu_enabled
from tabs.archive import (  # noqa: F401 - the endpoints, importable from app as before
    archive_decisions,
    archive_rebuild,
    archive_run,
    archive_show,
    archive_tab,
)
from tabs.common import (  # noqa: F401 - FACTS and LORA for the tests
    DELETE_CACHE,
    FACTS,
    I18N,
    LORA,
    MAX_FILE_SIZE,
    QUEUE_MAX,
    downloads,
    t,
)
from tabs.lora import lora_run, lora_tab  # noqa: F401
from tabs.vet import vet_run, vet_run_herd, vet_tab  # noqa: F401
from vet import ui as vet_ui

log = logging.getLogger("borde.app")
ROOT = Path(__file__).parent
# Each tab's look beside its module (tabs/NAME.css), after what they share (app.css).
CSS_FILES = [ROOT / "app.css", *sorted((ROOT / "tabs").glob("*.css"))]
# Imported in the background at start-up, so no tab's first answer pays for them.
WARM_IMPORTS = ["torch", "transformers.modeling_utils", "vet.modeling_efficientnet_lite",
                "vet.heatmap", "pymupdf", "cv2", "imagehash", "matplotlib.figure"]
if LORA.can_run:
    WARM_IMPORTS += ["diffusers.pipelines.stable_diffusion_xl.pipeline_stable_diffusion_xl",
                     "peft"]


def build_app() -> gr.Blocks:
    """The Blocks tree; built without touching CUDA so ZeroGPU can start it."""
    with gr.Blocks(title="Borde", delete_cache=DELETE_CACHE) as demo:
        # The page's language, filled in by UI_LANG_JS on every event that writes words.
        ui_lang = gr.Radio(["en", "es"], value="en", visible=False, label="ui_lang")
        # Clicked by app.js after Settings -> Language: each tab writes what is on screen
        # (an answer, a status line) again in the new language. In the DOM, never seen.
        relang = gr.Button("relang", visible="hidden", elem_id="borde-relang")
        gr.Markdown(t("title"))
        # On a phone the three tabs wrap onto a second row instead of hiding behind "•••".
        with gr.Tabs(overflow_behavior="wrap", elem_id="borde-tabs"):
            with gr.Tab(t("tab_vet"), id="vet"):
                vet_tab(ui_lang, relang)
            with gr.Tab(t("tab_archive"), id="archive"):
                archive_tab(ui_lang, relang)
            with gr.Tab(t("tab_lora"), id="lora"):
                lora_tab(ui_lang, relang)
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
                css="\n".join(p.read_text(encoding="utf-8") for p in CSS_FILES), head=head_html(),
                # no run history kept in the browser (a shared phone), so no "Runs" link
                footer_links=["api", "gradio", "settings"], run_history=False)


if __name__ == "__main__":
    if os.environ.get("BORDE_WARM_IMPORTS", "1") != "0":
        # On ZeroGPU the answers run in a GPU worker: imports only, no CPU warm-up answer.
        warm_imports(WARM_IMPORTS, then=None if zero_gpu_enabled() else vet_ui.warm_up)
    build_app().launch(**launch_kwargs())
