"""Scans skewed a few degrees: real pages of figures/early and the Moreno chapbooks (CC0,
public domain) turned as a careless scan or a bowed book leaves them (numbers: python -m
bench.figure_robustness --skew 3 -3 5)."""

from __future__ import annotations

import pytest

from archive.figures import finder as F
from bench import figure_eval as E


def skewed(shared_data, name: str, deg: float):
    """The page scanned ``deg`` degrees askew, as bench.figure_robustness makes it: its
    preview and its pictures' boxes (the upright boxes round their turned corners)."""
    from bench import figure_robustness as R

    E.DATA = R.DATA = shared_data
    way = f"skew {deg:g} deg"
    R.CHANGES.setdefault(way, (R._skew(deg), 90, R._skew_box(deg)))
    page = next(p for p in E.early_pages() + E.moreno_pages() if p.name.endswith(name))
    preview = R.scan_preview(R.rescan((shared_data / page.name).read_bytes(), way))
    return page, preview, R.truth_as(page, way)


@pytest.mark.parametrize(("name", "deg"), [
    ("btv1b8626772v_f22.jpg", 5.0),  # two miniatures among two columns: one crop, missed
    ("btv1b8626772v_f23.jpg", 5.0),
    ("Moreno_119_1.jpg", 3.0),  # three woodcuts over verse: one was lost
])
def test_a_skewed_page_is_read_level_and_its_pictures_found(shared_data, name, deg):
    """At 3-5 degrees a line drifts a text height across a column, so the text rhythm
    breaks and columns glue to pictures. Read turned level, each picture is its crop."""
    _, preview, truth = skewed(shared_data, name, deg)
    kept = [r.box for r in F.find(preview).regions if r.kept]
    matched = E.match(truth, kept)
    assert len(matched) == len(truth) == len(kept)
    assert min(iou for _, _, iou in matched) >= 0.7


@pytest.mark.parametrize("name", ["bpt6k6127905_f23.jpg",
                                  "lat_bnf-bpt6k533863_1_1b29f_default.jpg"])
def test_a_skewed_text_page_gives_no_crop(shared_data, name):
    page, preview, _ = skewed(shared_data, name, 5.0)
    assert page.label == "text"
    assert [r for r in F.find(preview).regions if r.kept] == []


def test_the_skew_is_read_from_the_glyphs_bottoms(shared_data):
    """A text page skewed 3 degrees either way reads within half a degree of that, on top
    of its own skew as published; a title page of big letters (too few glyph-sized
    shapes to fit a baseline to) reads level whatever its skew."""
    own = F._skew(F._analyse(E.load_preview(shared_data / next(
        p.name for p in E.early_pages() if p.name.endswith("bpt6k6127905_f23.jpg"))))[0])
    for deg in (3.0, -3.0):
        _, preview, _ = skewed(shared_data, "bpt6k6127905_f23.jpg", deg)
        assert abs(F._skew(F._analyse(preview)[0]) - (own - deg)) <= 0.5
    _, title, _ = skewed(shared_data, "btv1b8626243d_f9.jpg", 5.0)
    assert F._skew(F._analyse(title)[0]) == 0.0


@pytest.mark.parametrize("deg", [0.75, 1.5])
def test_woodcuts_set_edge_to_edge_a_little_askew_are_each_a_crop(shared_data, deg):
    """Moreno 119_1's three woodcuts in a row, parted by channels of paper a pixel or two
    wide at preview scale. Under the 2 degrees at which a page is read level, a skew
    turns each channel across a column or two, and ink crossed every column: two of the
    woodcuts were one crop. Read sheared by the page's own skew too, each is its crop."""
    _, preview, truth = skewed(shared_data, "Moreno_119_1.jpg", deg)
    kept = [r.box for r in F.find(preview).regions if r.kept]
    matched = E.match(truth, kept)
    assert len(matched) == len(truth) == len(kept) == 3
    assert min(iou for _, _, iou in matched) >= 0.7
