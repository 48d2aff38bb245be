"""Pages printed across the book: a landscape plate or a table, its lines running down the
scan. Real pages of figures/early (CC0) turned a quarter, as such a page is scanned
(numbers: python -m bench.figure_robustness --only turned)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from archive import figures as F
from bench import figure_eval as E


def turned(shared_data: Path, name: str) -> tuple[E.Page, Image.Image, list]:
    """The early page printed across the book, as its scan shows it: its top at the left
    (turned a quarter anticlockwise, as printers set such pages); its preview, and its
    pictures' boxes."""
    E.DATA = shared_data
    page = next(p for p in E.early_pages() if p.name.endswith(name))
    with Image.open(shared_data / page.name) as im:
        scan = im.convert("RGB").transpose(Image.Transpose.ROTATE_90)
    buf = io.BytesIO()
    scan.save(buf, "JPEG", quality=90)
    truth = [(b[1], 1 - b[2], b[3], 1 - b[0]) for b in page.truth]
    return page, E.jpeg_preview(buf.getvalue()), truth


@pytest.mark.parametrize("name", ["btv1b8626779r_f40.jpg", "bpt6k1514025q_f21.jpg"])
def test_a_turned_text_page_gives_no_crop(shared_data, name):
    """Read across its rows, a column of text turned a quarter is a tall block of specks
    with no line rhythm: it was a crop. Its rhythm runs down the columns: no crop."""
    page, preview, _ = turned(shared_data, name)
    assert page.label == "text"
    assert [r for r in F.find(preview).regions if r.kept] == []


@pytest.mark.parametrize(("name", "least"), [
    ("btv1b8626779r_f32.jpg", 0.85),  # a woodcut under two lines, missed turned
    ("bpt6k15223596_f26.jpg", 0.8),  # a painted miniature, its text columns were crops
])
def test_a_turned_picture_is_the_one_crop_in_the_page_s_own_frame(shared_data, name,
                                                                  least):
    _, preview, truth = turned(shared_data, name)
    kept = [r.box for r in F.find(preview).regions if r.kept]
    matched = E.match(truth, kept)
    assert len(matched) == len(truth) == len(kept) == 1
    assert matched[0][2] >= least


def test_a_turned_scan_s_page_extent_is_the_upright_one_turned(shared_data):
    """A Wolfenbüttel page on its cloth beside the facing page, its chart and label under
    it (half the scan is the page), turned: its text runs down, so it is looked at
    upright, and its extent comes back in the turned scan's own frame. Its headpiece is
    an ornament either way: no crop."""
    name = "qun-607-5_00001-00179.pdf_page_9.jpg"
    page, preview, _ = turned(shared_data, name)
    upright = F.find(E.load_preview(shared_data / page.name))
    x0, y0, x1, y1 = upright.page
    assert (x1 - x0) * (y1 - y0) < 0.6
    found = F.find(preview)
    assert E.iou(found.page, (y0, 1 - x1, y1, 1 - x0)) >= 0.95
    assert [r for r in found.regions if r.kept] == []
