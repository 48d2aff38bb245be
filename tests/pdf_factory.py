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

from bench.magazine import jpx_bytes


def labelled_pages(shared_data: Path) -> list[tuple[Path, str]]:
    with open(shared_data / "pages" / "labels.csv", newline="") as fh:
        return [(shared_data / row["file"], row["label"]) for row in csv.DictReader(fh)]


def chapbook_boxes(shared_data: Path) -> dict[Path, list[tuple[int, int, int, int]]]:
    """Moreno chapbook pages and their annotated woodcut boxes (pixels); [] for none."""
    out: dict[Path, list[tuple[int, int, int, int]]] = {}
    with open(shared_data / "figures" / "moreno" / "regions.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            boxes = out.setdefault(shared_data / row["file"], [])
            if row["kind"] != "none":
                boxes.append(tuple(int(row[k]) for k in ("x0", "y0", "x1", "y1")))
    return out


def chapbook_pages(shared_data: Path) -> list[Path]:
    """Pages with at least one woodcut, one per chapbook first, in a fixed order."""
    pictured = sorted(p for p, boxes in chapbook_boxes(shared_data).items() if boxes)
    first, rest, seen = [], [], set()
    for p in pictured:
        book = p.name.split("_")[-2]
        (rest if book in seen else first).append(p)
        seen.add(book)
    return first + rest


def jpeg_bytes(path: Path, quality: int = 85) -> bytes:
    img = Image.open(path).convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


def scans_pdf(out: Path, images: list[Path], dpi: int = 150, rotate: int = 0,
              jpx: bool = False) -> Path:
    """One page per image, the JPEG (or with ``jpx`` the JPEG 2000) embedded as the whole
    page (DCTDecode, JPXDecode)."""
    doc = pymupdf.open()
    for path in images:
        if jpx:  # lossy JPEG 2000, as archive.org's PDFs carry their scans
            data = jpx_bytes(Image.open(path))
        elif path.suffix.lower() in (".jpg", ".jpeg"):
            data = path.read_bytes()
        else:
            data = jpeg_bytes(path)
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


def woodcut(shared_data: Path, n: int = 0) -> Image.Image:
    """The n-th annotated Moreno woodcut, cut out exactly by its box."""
    pictured = [(p, b) for p, boxes in sorted(chapbook_boxes(shared_data).items()) for b in boxes]
    path, box = pictured[n % len(pictured)]
    return Image.open(path).convert("RGB").crop(box)


def figure_page(
    out: Path, figures: list[Image.Image], width: int = 1200, height: int = 1700,
    paper: tuple[int, int, int] = (236, 228, 204),
) -> list[tuple[float, float, float, float]]:
    """A page with the figures side by side near the top, saved as JPEG; their exact boxes.

    The boxes are fractions of the page, as ``metadata.jsonl`` gives them.
    """
    page = Image.new("RGB", (width, height), paper)
    gap = width // 20
    scale = min(1.0, (width - gap * (len(figures) + 1)) / sum(f.width for f in figures))
    x, y, boxes = gap, height // 10, []
    for fig in figures:
        fig = fig.resize((round(fig.width * scale), round(fig.height * scale)))
        page.paste(fig, (x, y))
        boxes.append((x / width, y / height, (x + fig.width) / width, (y + fig.height) / height))
        x += fig.width + gap
    page.save(out, quality=90)
    return boxes


def chapbook_lines(shared_data: Path) -> dict[Path, list[tuple[tuple[int, int, int, int], str]]]:
    """Every printed line of the Moreno pages: its box (pixels of the image) and its text."""
    out: dict[Path, list[tuple[tuple[int, int, int, int], str]]] = {}
    with open(shared_data / "figures" / "moreno" / "lines.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            box = tuple(int(row[k]) for k in ("x0", "y0", "x1", "y1"))
            out.setdefault(shared_data / row["file"], []).append((box, row["text"]))
    return out


def add_invisible_line(page: pymupdf.Page, box: tuple[float, float, float, float], text: str,
                       ) -> None:
    """One line of invisible text (render mode 3) stretched over ``box`` (points), as
    OCRmyPDF writes it: the font sized to the line, scaled to its width."""
    x0, y0, x1, y1 = box
    size = max(1.0, 0.8 * (y1 - y0))
    width = pymupdf.get_text_length(text, fontname="helv", fontsize=size)
    if width <= 0:
        return
    origin = pymupdf.Point(x0, y1 - 0.2 * (y1 - y0))
    stretch = pymupdf.Matrix((x1 - x0) / width, 1)
    page.insert_text(origin, text, fontsize=size, fontname="helv", render_mode=3,
                     morph=(origin, stretch))


def add_invisible_line_up(page: pymupdf.Page, box: tuple[float, float, float, float],
                          text: str) -> None:
    """``add_invisible_line`` for a line that runs up the page (a page printed across the
    book, its top at the left): the text turned a quarter anticlockwise, fitted to
    ``box`` (points), read from its bottom."""
    x0, y0, x1, y1 = box
    size = max(1.0, 0.8 * (x1 - x0))
    length = pymupdf.get_text_length(text, fontname="helv", fontsize=size)
    if length <= 0:
        return
    origin = pymupdf.Point(x1 - 0.2 * (x1 - x0), y1)
    page.insert_text(origin, text, fontsize=size, fontname="helv", render_mode=3, rotate=90,
                     morph=(origin, pymupdf.Matrix(1, (y1 - y0) / length)))


def turned_text_layer_pdf(out: Path, images: list[Path], lines: dict, dpi: int = 150) -> Path:
    """``text_layer_pdf`` of pages printed across the book: each scan turned a quarter
    anticlockwise (its top at the left, as printers set such a page), its lines with it."""
    doc = pymupdf.open()
    k = 72 / dpi
    for path in images:
        with Image.open(path) as im:
            turned = im.convert("RGB").transpose(Image.Transpose.ROTATE_90)
        w = turned.height  # the upright scan's width: (x, y) upright is (y, w - x) turned
        buf = io.BytesIO()
        turned.save(buf, "JPEG", quality=90)
        page = doc.new_page(width=turned.width * k, height=turned.height * k)
        page.insert_image(page.rect, stream=buf.getvalue())
        for (x0, y0, x1, y1), text in lines.get(path, []):
            add_invisible_line_up(page, (y0 * k, (w - x1) * k, y1 * k, (w - x0) * k), text)
    doc.save(out, garbage=3, deflate=True)
    doc.close()
    return out


def text_layer_pdf(out: Path, images: list[Path], lines: dict, dpi: int = 150,
                   as_form: bool = True) -> Path:
    """Scans with an OCR text layer: each page image under its lines in invisible text.

    ``as_form`` puts the layer in a form XObject drawn under the image, as OCRmyPDF
    grafts it; otherwise the text is drawn on the page itself, over the image.
    ``lines`` maps an image to ``[(box in pixels, text)]``; a page without lines has
    no text layer at all.
    """
    doc = pymupdf.open()
    k = 72 / dpi
    for path in images:
        data = path.read_bytes()
        w, h = Image.open(io.BytesIO(data)).size
        page = doc.new_page(width=w * k, height=h * k)
        page_lines = lines.get(path, [])
        if page_lines and as_form:
            layer = pymupdf.open()
            text_page = layer.new_page(width=w * k, height=h * k)
            for (x0, y0, x1, y1), text in page_lines:
                add_invisible_line(text_page, (x0 * k, y0 * k, x1 * k, y1 * k), text)
            page.show_pdf_page(page.rect, layer, 0, overlay=False)
        page.insert_image(page.rect, stream=data)
        if page_lines and not as_form:
            for (x0, y0, x1, y1), text in page_lines:
                add_invisible_line(page, (x0 * k, y0 * k, x1 * k, y1 * k), text)
    doc.save(out, garbage=3, deflate=True)
    doc.close()
    return out
