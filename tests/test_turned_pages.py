"""Pages printed across the book: a landscape plate or a table, its lines running down the
scan. Real pages of figures/early (CC0) turned a quarter, as such a page is scanned
(numbers: python -m bench.figure_robustness --only turned)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
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
    ("btv1b8626772v_f19.jpg", 0.8),  # a miniature among two columns: read across, no crop
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


def test_a_turned_page_s_picture_is_cut_upright(shared_data, tmp_path):
    """Built into a dataset, the woodcut of a page printed across the book comes out
    standing, as on the same page printed upright: the same size, the same picture; its
    rows say it was turned, and its box stays in the displayed page's frame."""
    import json
    import zipfile

    import archive
    from tests.pdf_factory import scans_pdf

    name = "btv1b8626779r_f32.jpg"
    page, _, truth = turned(shared_data, name)
    with Image.open(shared_data / page.name) as im:
        im.convert("RGB").transpose(Image.Transpose.ROTATE_90).save(tmp_path / "turned.jpg",
                                                                    quality=92)
        im.convert("RGB").save(tmp_path / "upright.jpg", quality=92)
    crops = {}
    for kind in ("turned", "upright"):
        pdf = scans_pdf(tmp_path / f"{kind}.pdf", [tmp_path / f"{kind}.jpg"])
        archive.build_dataset([pdf], tmp_path / f"{kind}.zip")
        with zipfile.ZipFile(tmp_path / f"{kind}.zip") as zf:
            meta = [json.loads(x) for x in zf.read("metadata.jsonl").decode().splitlines()]
            assert len(meta) == 1
            crops[kind] = (meta[0], Image.open(io.BytesIO(zf.read(meta[0]["file_name"]))))
    (m_turned, a), (m_upright, b) = crops["turned"], crops["upright"]
    assert m_turned["turned"] == 90 and m_upright["turned"] == 0
    assert E.iou(tuple(m_turned["bbox"]), truth[0]) >= 0.8  # the box: the displayed page's
    # the same box on the page either way (the turned scan's box turned back upright)
    x0, y0, x1, y1 = m_turned["bbox"]
    assert E.iou((1 - y1, x0, 1 - y0, x1), tuple(m_upright["bbox"])) >= 0.9
    # the same training size, or the next bucket: the two boxes' bottoms stand 1.3% of the
    # page apart (the finder's, on the page read turned), and with the heading line cut
    # off both (crop_edges) the turned crop's shape falls just past a bucket's edge
    assert abs(a.width - b.width) <= 64 and abs(a.height - b.height) <= 64
    assert abs(a.width / a.height - b.width / b.height) <= 0.3
    # the same picture: its pixels, brought to one small size, correlate with the upright
    # crop's, and the crop laid back on its side does not (the boxes differ by a few
    # pixels, the buckets by a step, which a perceptual hash's 64 bits read as 14 apart
    # against 22 for the crop on its side)
    def grey(x: Image.Image) -> np.ndarray:
        g = np.asarray(x.convert("L").resize((32, 16), Image.Resampling.BOX), float).ravel()
        return (g - g.mean()) / (g.std() + 1e-9)

    near = float(np.mean(grey(a) * grey(b)))
    sideways = float(np.mean(grey(a.rotate(90, expand=True)) * grey(b)))
    assert near >= 0.5 > sideways + 0.3, (near, sideways)
