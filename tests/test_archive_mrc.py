"""archive.org's PDFs are MRC: a background at a third of the scan's resolution and the
ink as a full-resolution 1-bit mask over it (archive-pdf-tools). MuPDF renders such a page,
and the finder must see it at the size the same scan as a JPEG previews at: at 360 px a
chapbook's woodcut read as a text block."""

from __future__ import annotations

import io

import numpy as np
import pymupdf
import pytest
from PIL import Image

from archive import figures as F
from archive import reader
from archive.boxes import iou
from bench.mrc import add_jpeg_page, add_mrc_page

pytest.importorskip("PIL.Jpeg2KImagePlugin")

# A chapbook page whose woodcut the finder called a text block at a 340-375 px preview
PAGE, WOODCUT = "Moreno_122_1.jpg", (101, 206, 987, 811)  # px of its 1108x1600


def _pdf(path, add, rgb: np.ndarray) -> pymupdf.Document:
    doc = pymupdf.open()
    add(doc, rgb)
    doc.save(path)
    return reader.open_pdf(path)


@pytest.fixture(scope="module")
def pages(shared_data, tmp_path_factory):
    """The page as one JPEG, and laid out as archive.org's PDFs are."""
    tmp = tmp_path_factory.mktemp("mrc")
    with Image.open(shared_data / "figures" / "moreno" / "images" / PAGE) as im:
        big = im.convert("RGB").resize((3 * im.width, 3 * im.height), Image.Resampling.BICUBIC)
    rgb = np.asarray(big)  # as archive.org holds it: 300-400 dpi, not the shipped 130
    return {name: reader.read_page(_pdf(tmp / f"{name}.pdf", add, rgb), 0)
            for name, add in (("jpeg", add_jpeg_page), ("mrc", add_mrc_page))}


def test_an_mrc_page_is_previewed_at_the_size_of_its_scans_jpeg(pages):
    jpeg, mrc = pages["jpeg"], pages["mrc"]
    assert jpeg.jpeg is not None and mrc.jpeg is None and mrc.jpx is None  # MuPDF renders it
    assert max(jpeg.preview.size) == 600  # 1/8 of its 4800 px
    assert mrc.preview.size == jpeg.preview.size


def test_the_woodcut_of_an_mrc_page_is_found_as_in_its_jpeg(pages):
    w, h = 1108, 1600  # the shipped page's px
    truth = (WOODCUT[0] / w, WOODCUT[1] / h, WOODCUT[2] / w, WOODCUT[3] / h)
    for page in pages.values():
        kept = [r.box for r in F.figures(page.preview)]
        assert len(kept) == 1 and iou(kept[0], truth) >= 0.8


def _one_page(out, image: Image.Image, dpi: int = 300) -> pymupdf.Document:
    buf = io.BytesIO()
    image.save(buf, "PNG")
    doc = pymupdf.open()
    page = doc.new_page(width=image.width * 72 / dpi, height=image.height * 72 / dpi)
    page.insert_image(page.rect, stream=buf.getvalue())
    doc.save(out)
    return reader.open_pdf(out)


def test_a_grey_scan_mupdf_renders_is_previewed_at_its_jpegs_size(shared_data, tmp_path):
    """A PNG (Flate) scan is rendered too, at the size of its JPEG; a 1-bit one (CCITT,
    JBIG2) at PREVIEW_SIDE, where the finder's rules for binarized pages were measured."""
    path = shared_data / "figures" / "early" / "images" / "bpt6k15260973_f9.jpg"
    with Image.open(path) as im:
        grey, bits = im.convert("L"), im.convert("L").point(lambda v: 255 * (v > 128)).convert("1")
    w, h = reader._dct_size(grey.width, grey.height, reader.PREVIEW_SIDE)
    doc = _one_page(tmp_path / "grey.pdf", grey)
    got = reader.read_page(doc, 0)
    assert got.jpeg is None and doc[0].get_images(full=True)[0][4] == 8
    assert max(got.preview.size) == max(w, h) == 375  # 1000 px: 3/8
    assert abs(min(got.preview.size) - min(w, h)) <= 1
    doc = _one_page(tmp_path / "bits.pdf", bits)
    assert doc[0].get_images(full=True)[0][4] == 1
    assert max(reader.read_page(doc, 0).preview.size) == reader.PREVIEW_SIDE


def test_an_older_mrc_page_is_sized_by_its_full_resolution_stencil(shared_data, tmp_path):
    """LuraTech's MRC, in older archive.org PDFs: a 1-bit image of the ink at full
    resolution drawn over a background at a third of it."""
    with Image.open(shared_data / "figures" / "moreno" / "images" / PAGE) as im:
        full = im.convert("L").resize((3 * im.width, 3 * im.height))  # 3324 x 4800
    bits = full.point(lambda v: 255 * (v > 128)).convert("1")
    doc = pymupdf.open()
    page = doc.new_page(width=full.width * 72 / 400, height=full.height * 72 / 400)
    for layer in (full.resize((im.width, im.height)), bits):
        buf = io.BytesIO()
        layer.save(buf, "JPEG" if layer.mode == "L" else "PNG")
        page.insert_image(page.rect, stream=buf.getvalue())
    doc.save(tmp_path / "luratech.pdf")
    got = reader.read_page(reader.open_pdf(tmp_path / "luratech.pdf"), 0)
    assert got.jpeg is None
    assert max(got.preview.size) == 600  # the stencil's 1/8; the background's would be 400


def test_a_page_whose_images_are_not_its_scan_keeps_the_preview_side(tmp_path):
    """A born-digital page with a picture of another shape: nothing says what resolution
    the page has, so it is rendered at PREVIEW_SIDE as before."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 72), "A page of set text, and a wide picture under it.")
    pic = np.full((1200, 3000, 3), 200, np.uint8)
    page.insert_image(pymupdf.Rect(72, 100, 523, 280), pixmap=pymupdf.Pixmap(
        pymupdf.csRGB, 3000, 1200, pic.tobytes(), False))
    doc.save(tmp_path / "digital.pdf")
    got = reader.read_page(reader.open_pdf(tmp_path / "digital.pdf"), 0)
    assert max(got.preview.size) == reader.PREVIEW_SIDE
