"""Real PDFs for tests, made from the real page scans in ../shared/data.

Each scan becomes one full-page JPEG on its own page, which is exactly how a
digitised magazine is laid out, so the reader's fast path is what gets tested.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pymupdf
from PIL import Image


def labelled_pages(shared_data: Path) -> list[tuple[Path, str]]:
    with open(shared_data / "pages" / "labels.csv", newline="") as fh:
        return [(shared_data / row["file"], row["label"]) for row in csv.DictReader(fh)]


def jpeg_bytes(path: Path, quality: int = 85) -> bytes:
    img = Image.open(path).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def scans_pdf(out: Path, images: list[Path], dpi: int = 150, rotate: int = 0) -> Path:
    """One page per image, the JPEG embedded as the whole page (DCTDecode)."""
    doc = pymupdf.open()
    for path in images:
        data = path.read_bytes() if path.suffix.lower() in (".jpg", ".jpeg") else jpeg_bytes(path)
        w, h = Image.open(io.BytesIO(data)).size
        page = doc.new_page(width=w * 72 / dpi, height=h * 72 / dpi)
        page.insert_image(page.rect, stream=data)
        if rotate:
            page.set_rotation(rotate)
    doc.save(out)
    doc.close()
    return out


def text_pdf(out: Path, pages: int = 2) -> Path:
    """A born-digital text PDF: no images, so every page takes the render path."""
    doc = pymupdf.open()
    for n in range(pages):
        page = doc.new_page()
        body = f"Page {n + 1}. " + "The quick brown fox jumps over the lazy dog. " * 60
        page.insert_textbox(pymupdf.Rect(50, 50, 545, 790), body, fontsize=11)
    doc.save(out)
    doc.close()
    return out
