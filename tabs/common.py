"""What the tabs share: the labels' ``gr.I18n`` with the start-up facts written in, the
status-line HTML, and the folder for small result files."""

from __future__ import annotations

import html
import logging
import os
import tempfile
import uuid
from pathlib import Path

import gradio as gr

import tempfolders
import ui_text
from lora import ui as lora_ui

log = logging.getLogger("borde.app")
MAX_FILE_SIZE = os.environ.get("BORDE_MAX_UPLOAD", "2gb")
QUEUE_MAX = int(os.environ.get("BORDE_QUEUE_MAX", "16"))
MAX_PAGES = int(os.environ.get("BORDE_MAX_PAGES", "3000"))
# Uploads and outputs older than an hour are swept every hour.
DELETE_CACHE = (3600, 3600)
LORA = lora_ui.model_state()  # which base and style LoRA are there (one look, 3 s at most)
FACTS = {"max_upload": ui_text.size_words(MAX_FILE_SIZE), "max_pages": MAX_PAGES,
         "base": LORA.base, "lora": LORA.lora or "", "base_gb": LORA.base_gb or ""}
I18N = gr.I18n(**ui_text.i18n_tables(FACTS))
t = I18N


def downloads(files: dict[str, str]) -> list[str]:
    """Small result files in a fresh folder; folders older than an hour are swept."""
    root = Path(tempfile.gettempdir()) / "borde-downloads"
    root.mkdir(exist_ok=True)
    tempfolders.sweep(root, "", DELETE_CACHE[1])
    folder = root / uuid.uuid4().hex
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in files]


def note(text: str, cls: str = "note") -> str:
    return f'<p class="borde-{cls}">{html.escape(text)}</p>'
