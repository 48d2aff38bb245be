"""A line of text set tight on a picture's top or bottom is cut off its crop, at the
crop's own resolution (archive/crop_edges.py); a picture's own edge stays. Real pages of
figures/early (CC0) and the Moreno chapbooks, built through the pipeline.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

import archive
from archive import crop_edges
from archive import figures as F
from archive.resize import crop_array
from bench import figure_eval as E
from bench import figure_robustness as R
from tests.pdf_factory import scans_pdf
from tests.zips import region_rows

# a rubric or caption glued under a miniature, a title line over a woodcut, the next
# line's letters in the box's margin; then two whose letters touch the frame's rule in
# the scan too (a heading over a woodcut, a printer's imprint under his device)
TEXT_ON_EDGE = ["bpt6k15223596_bpt6k15223596_f21.jpg", "btv1b8626772v_btv1b8626772v_f26.jpg",
                "btv1b8626772v_btv1b8626772v_f27.jpg", "bpt6k15260973_f37.jpg",
                "btv1b8626779r_btv1b8626779r_f47.jpg",
                "lat_diglib-hab_qun-607-5_drucke_qun-607-5_00001-00179.pdf_page_3.jpg"]
# a worn woodcut's broken frame rule at its top; a chapbook woodcut's ground strokes
OWN_EDGE = ["bpt6k15260973_f19.jpg", "Moreno_245_1.jpg", "Moreno_234_1.jpg"]
# a woodcut whose box took in an initial's first line under it, wider than the woodcut
WIDER_LINE = ["bpt6k1521441j_bpt6k1521441j_f8.jpg"]
EVERY = TEXT_ON_EDGE + OWN_EDGE + WIDER_LINE


def pages(shared_data: Path, names: list[str]) -> list[E.Page]:
    """The named pages of figures/early (the woodcuts boxed by eye counted) and Moreno."""
    E.DATA = shared_data
    every = E.with_by_eye(E.early_pages()) + E.moreno_pages()
    return [next(p for p in every if p.name.endswith("/" + n)) for n in names]


@pytest.fixture(scope="module")
def built(shared_data, tmp_path_factory):
    """Each page's kept boxes as the finder boxed them and as the dataset holds them."""
    tmp = tmp_path_factory.mktemp("edges")
    chosen = pages(shared_data, EVERY)
    pdf = scans_pdf(tmp / "pages.pdf", [shared_data / p.name for p in chosen])
    archive.build_dataset([pdf], tmp / "pages.zip")
    out = {}
    for n, p in zip(EVERY, chosen, strict=True):
        finder = [r.box for r in F.figures(E.load_preview(shared_data / p.name))]
        out[n] = (p, finder, [])
    for row in region_rows(tmp / "pages.zip"):
        if row["kept"] == "1":
            n = EVERY[int(row["page"]) - 1]
            out[n][2].append(tuple(float(row[k]) for k in ("x0", "y0", "x1", "y1")))
    return out


@pytest.mark.parametrize("name", TEXT_ON_EDGE)
def test_a_line_of_text_on_a_picture_s_edge_is_cut_off_its_crop(built, name):
    """The finder's box (preview scale) takes in the line; the crop leaves it out and
    ends where the picture does."""
    page, finder, crops = built[name]
    truth = page.truth[0] if len(page.truth) == 1 else max(
        page.truth, key=lambda t: max(E.iou(t, c) for c in crops))
    before = max(E.iou(truth, b) for b in finder)
    after, crop = max((E.iou(truth, c), c) for c in crops)
    assert after >= 0.91 and after >= before + 0.03, (before, after)
    # no further out than the finder's margin (PARAMS["pad"], 1.5% of the box)
    assert crop[1] >= truth[1] - 0.01 and crop[3] <= truth[3] + 0.01, (crop, truth)


@pytest.mark.parametrize("name", OWN_EDGE)
def test_a_picture_s_own_edge_stays_in_its_crop(built, name):
    """A broken frame rule or a ground's strokes beyond a row of paper are the picture's."""
    _page, finder, crops = built[name]
    assert len(crops) == len(finder)
    for c in crops:
        assert max(E.iou(c, b) for b in finder) >= 0.995


def test_a_crop_is_no_wider_than_its_picture_once_a_wider_line_is_cut(built):
    """The line cut off the bottom reached into the left margin; the paper it leaves at
    the side goes too, and the picture's own sides stay."""
    page, finder, crops = built[WIDER_LINE[0]]
    truth, box, crop = page.truth[0], finder[0], crops[0]
    assert box[0] < truth[0] - 0.05  # the finder's box: the margin's paper beside it
    assert truth[0] - 0.02 <= crop[0] <= truth[0] and crop[2] >= truth[2], (crop, truth)
    assert E.iou(truth, crop) >= 0.9 > E.iou(truth, box) + 0.05


def test_no_chapbook_woodcut_loses_any_of_itself(shared_data):
    """Over every chapbook page: a crop cut at the scan's resolution is never a worse
    match for its woodcut than the finder's box (most are not cut at all)."""
    E.DATA = shared_data
    cut = 0
    for page in E.moreno_pages():
        found = F.find(E.load_preview(shared_data / page.name))
        kept = [r.box for r in found.regions if r.kept]
        for finder, box in zip(kept, E.as_cut(found, shared_data / page.name), strict=True):
            cut += box != finder
            for t in page.truth:
                if E.iou(t, finder) >= 0.5:
                    assert E.iou(t, box) >= E.iou(t, finder) - 0.002, (page.name, finder, box)
    assert cut <= 3


def test_a_turned_crop_is_cut_across_its_columns():
    """A crop cut upright (a page printed across the book, its top at the left): rows cut
    off the upright crop are columns of the page, and the box says which."""
    page = np.random.default_rng(0).integers(0, 255, (300, 200), dtype=np.uint8)
    box, (top, bottom, left, right) = (0.1, 0.2, 0.9, 0.7), (7, 11, 5, 3)
    for turned in (0, 90):
        upright = np.rot90(crop_array(page, box), -turned // 90)
        trimmed = crop_edges.trimmed_box(box, turned, (top, bottom, left, right), (200, 300))
        again = np.rot90(crop_array(page, trimmed), -turned // 90)
        h, w = upright.shape
        assert np.array_equal(again, upright[top:h - bottom, left:w - right]), turned


def _as_rescanned(shared_data: Path, name: str, change: str) -> tuple[E.Page, list, list]:
    """A page of figures/early rescanned the ``change`` way (bench.figure_robustness,
    a change that moves no box): the page, the finder's kept boxes and the crops as cut
    from that scan."""
    page = pages(shared_data, [name])[0]
    data = R.rescan((shared_data / page.name).read_bytes(), change)
    found = F.find(R.scan_preview(data))
    return page, [r.box for r in found.regions if r.kept], E.as_cut(found, io.BytesIO(data))


def test_lines_set_solid_are_cut_off_the_crop(shared_data):
    """A woodcut's box took in three lines of verse set solid under it (BY_EYE's p10),
    on the scan made lighter: no row of paper parts the lines (the rows between carry
    their ascenders and descenders, and a rule runs down beside them), their thinnest
    rows do, and the crop ends where the woodcut does."""
    page, finder, crops = _as_rescanned(
        shared_data, "lat_bnf-bpt6k533863_10_68d2e_default.jpg", "lighter (gamma 0.6)")
    truth = page.truth[0]
    assert finder[0][3] > truth[3] + 0.03  # the lines in the finder's box
    assert crops[0][3] <= truth[3] + 0.01 and E.iou(truth, crops[0]) >= 0.9, crops


@pytest.mark.parametrize("name", ["bpt6k1514025q_f9.jpg", "bpt6k6551882q_f5.jpg"])
def test_a_woodcut_s_ground_is_not_lines_set_solid(shared_data, name):
    """A printer's device and an oval portrait scanned light: the ground strokes at
    their foot part at thin rows as lines do, but they are faint and hold few shapes of
    a letter's size; the crop keeps them."""
    page, finder, crops = _as_rescanned(shared_data, name, "lighter (gamma 0.6)")
    for box, crop in zip(finder, crops, strict=True):
        assert crop[3] >= box[3] - 0.01, (box, crop)
    assert max(E.iou(page.truth[0], c) for c in crops) >= 0.85
