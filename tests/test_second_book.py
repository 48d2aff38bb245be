"""The second bench book (bench/second_book.py): a book of another make than the magazine,
so the archive bench measures figure mode on more than one kind of PDF."""

from __future__ import annotations

import collections
import io
from pathlib import Path

import pytest
from PIL import Image

from archive import reader
from bench import second_book


def test_plan_is_a_book_of_another_make(shared_data: Path) -> None:
    leaves = second_book.plan(240, data=shared_data)
    assert leaves == second_book.plan(240, data=shared_data)  # seeded
    plates = [leaf for leaf in leaves if leaf.kind == "plate"]
    assert len(plates) == 72  # 30% plates
    assert len({(p.source, p.crop) for p in plates}) == 72  # each plate a different picture
    sizes = collections.Counter((round(x.width_pt), round(x.height_pt)) for x in leaves)
    assert len(sizes) > 100  # hand-cropped scans: no two quite alike
    octavo = [x.width_pt for x in leaves if x.kind == "text"]
    folded = [x for x in plates if max(x.width_pt, x.height_pt) > 760]
    assert 0.2 < len(folded) / len(plates) < 0.6 and min(octavo) > 420 and max(octavo) < 445
    assert any(x.width_pt > x.height_pt for x in folded)  # a wide picture turns its leaf
    settings = collections.Counter((x.grey, x.subsampling, x.progressive) for x in leaves)
    assert {g for g, _, _ in settings} == {True, False}
    assert {s for _, s, _ in settings} == {0, 1, 2}
    assert 0.05 < sum(x.progressive for x in leaves) / 240 < 0.3
    assert min(x.quality for x in leaves) >= 70 and max(x.quality for x in leaves) <= 92


def test_book_streams_one_scan_a_page(shared_data: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(second_book, "CHUNK", 4)  # three saves for ten pages
    pdf = tmp_path / "book.pdf"
    leaves = second_book.write_second_book(pdf, 10, data=shared_data)
    assert pdf.read_bytes().count(b"startxref") == 3  # saved, then appended to twice
    doc = reader.open_pdf(pdf)
    assert doc.page_count == 10
    for page, leaf in zip(doc, leaves, strict=True):
        assert page.rect.width == pytest.approx(leaf.width_pt, abs=0.01)
        (xref, _, w, h, _, colours, _, _, filt, _), = page.get_images(full=True)
        assert filt == "DCTDecode"
        # no ICC profile, which poppler (the peer) would pay to apply to every pixel
        assert colours == ("DeviceGray" if leaf.grey else "DeviceRGB")
        # a full-page scan at 300 dpi, embedded 1:1
        assert (w, h) == (round(leaf.width_pt * 300 / 72), round(leaf.height_pt * 300 / 72))
        data = doc.xref_stream_raw(xref)
        with Image.open(io.BytesIO(data)) as img:
            assert img.mode == ("L" if leaf.grey else "RGB")
            assert bool(img.info.get("progressive")) == leaf.progressive
        # the archive reads each page's own JPEG, as it does a library's scan
        assert reader._single_scan(doc, page) is not None
    assert sum(leaf.kind == "plate" for leaf in leaves) == 3
