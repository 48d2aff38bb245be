"""JPEG 2000 scans (archive.org's PDFs) take the reader's fast path: a coarse wavelet level
for the preview, and the crop's level for a kept page, never MuPDF's decode of the whole
scan at every zoom."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest
from PIL import Image

import archive
from archive import reader
from archive.boxes import iou
from archive.figures import PREVIEW_SIDE
from bench.magazine import jpx_bytes
from tests.pdf_factory import chapbook_boxes, chapbook_pages, scans_pdf

pytest.importorskip("PIL.Jpeg2KImagePlugin")


@pytest.fixture(scope="module")
def woodcut_pages(shared_data):
    return chapbook_pages(shared_data)[:3]


def test_a_jpeg_2000_scan_is_decoded_at_the_coarsest_level_that_serves(woodcut_pages, tmp_path):
    path = woodcut_pages[0]
    w, h = Image.open(path).size
    for turn in (0, 90):
        doc = reader.open_pdf(scans_pdf(tmp_path / f"jpx{turn}.pdf", [path], rotate=turn,
                                        jpx=True))
        page = reader.read_page(doc, 0)
        assert page.jpx is not None and page.jpeg is None and page.image_only
        shown = (w, h) if turn == 0 else (h, w)
        assert (page.width, page.height) == shown
        # the preview: a level halved as often as it still keeps PREVIEW_SIDE on its long side
        assert PREVIEW_SIDE <= max(page.preview.size) < 2 * PREVIEW_SIDE
        assert (page.preview.width > page.preview.height) == (shown[0] > shown[1])
        assert page.full().size == shown
        need = (shown[0] // 3, shown[1] // 3)  # a third: the level of a half serves it
        half = page.full(need)
        assert half.size == (-(-shown[0] // 2), -(-shown[1] // 2))
        assert page.full_array(need).shape == (half.height, half.width, 3)
        doc.close()


def test_figure_mode_finds_the_same_woodcuts_in_jpeg_2000_as_in_jpeg(
        woodcut_pages, shared_data, tmp_path):
    boxes = chapbook_boxes(shared_data)
    kept = {}
    for codec in ("jpeg", "jpx"):
        pdf = scans_pdf(tmp_path / f"{codec}.pdf", woodcut_pages, jpx=codec == "jpx")
        archive.build_dataset([pdf], tmp_path / f"{codec}.zip", workers=1)
        with zipfile.ZipFile(tmp_path / f"{codec}.zip") as zf:
            rows = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
        kept[codec] = {int(r["page"]): tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))
                       for r in rows if r["kept"] == "1"}
    assert kept["jpx"].keys() == kept["jpeg"].keys() == {1, 2, 3}
    for n, path in enumerate(woodcut_pages, 1):
        assert iou(kept["jpx"][n], kept["jpeg"][n]) >= 0.9
        w, h = Image.open(path).size
        truth = [(x0 / w, y0 / h, x1 / w, y1 / h) for x0, y0, x1, y1 in boxes[path]]
        assert max(iou(kept["jpx"][n], t) for t in truth) >= 0.8


def test_a_jpeg_2000_scan_pillow_does_not_take_is_rendered_by_mupdf(woodcut_pages, tmp_path):
    """An alpha channel in the scan (Pillow opens RGBA): MuPDF composes the page."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page(width=400, height=578)
    page.insert_image(page.rect, stream=jpx_bytes(Image.open(woodcut_pages[0]), mode="RGBA"))
    doc.save(tmp_path / "alpha.pdf")
    doc.close()
    doc = reader.open_pdf(tmp_path / "alpha.pdf")
    got = reader.read_page(doc, 0)
    assert got.jpx is None and got.jpeg is None
    assert max(got.preview.size) >= PREVIEW_SIDE and got.full().width > got.preview.width


def test_a_scan_coded_with_fewer_levels_is_decoded_at_its_coarsest(woodcut_pages, tmp_path):
    """One wavelet level (two resolutions): a preview (from the half), not an error."""
    import pymupdf

    img = Image.open(woodcut_pages[0])
    doc = pymupdf.open()
    page = doc.new_page(width=img.width * 72 / 150, height=img.height * 72 / 150)
    page.insert_image(page.rect, stream=jpx_bytes(img, resolutions=2))
    doc.save(tmp_path / "one-level.pdf")
    doc.close()
    got = reader.read_page(reader.open_pdf(tmp_path / "one-level.pdf"), 0)
    assert got.jpx is not None
    jpeg_pdf = scans_pdf(tmp_path / "jpeg.pdf", [woodcut_pages[0]])
    jpeg = reader.read_page(reader.open_pdf(jpeg_pdf), 0)
    assert got.preview.size == jpeg.preview.size


def test_a_real_jpeg_2000_pdf_gives_the_pixels_mupdf_renders(shared_data):
    """OCRmyPDF's lichtenstein.pdf (a grey 512 px JP2 photo): the fast path's scan is
    MuPDF's render of the page at the scan's own size, pixel for pixel, and its preview
    has the size a JPEG of it would preview at (6/8: 384 px)."""
    import numpy as np
    import pymupdf

    doc = reader.open_pdf(shared_data / "pdfs" / "lichtenstein.pdf")
    page = reader.read_page(doc, 0)
    assert page.jpx is not None and page.preview.size == (384, 384)
    full = np.asarray(page.full())
    zoom = full.shape[1] / doc[0].rect.width
    pix = doc[0].get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB,
                            alpha=False)
    rendered = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)
    assert rendered.shape == full.shape
    assert np.abs(rendered.astype(int) - full).mean() < 1.0


def test_the_preview_of_a_jpeg_2000_scan_has_the_size_of_the_jpeg_ones(shared_data, tmp_path):
    """A 1000 px early page: its JPEG previews at 3/8 (375 px), its half level is 500 px. The
    finder counts text heights of 3-6 px, so it is shown the JPEG's size (`_dct_size`)."""
    path = shared_data / "figures" / "early" / "images" / "bpt6k15260973_f9.jpg"
    jpeg = reader.read_page(reader.open_pdf(scans_pdf(tmp_path / "a.pdf", [path])), 0)
    jpx = reader.read_page(reader.open_pdf(scans_pdf(tmp_path / "b.pdf", [path], jpx=True)), 0)
    assert jpx.jpx is not None and max(jpeg.preview.size) == 375
    assert jpx.preview.size == jpeg.preview.size
