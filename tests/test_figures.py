"""archive.figures on real pages and exact synthetic boxes (numbers: bench/figure_eval.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from archive import figures as F
from archive.figures.ink import text_height
from bench import figure_eval as E

# The grouped CV of bench/figure_eval.py finds every Moreno picture >= 2% of the page,
# median IoU 0.93, precision 1.0, every text page clean; these floors leave a margin.
MIN_RECALL, MIN_IOU, MIN_PRECISION, MIN_TEXT_CLEAN = 0.95, 0.88, 0.92, 0.95
# OCR-D "text" pages that do carry a picture: a fern drawing on a title page, and a
# historiated initial (a letter in a woodcut's temple). Kept crops there are right, not false.
OCRD_WITH_PICTURES = ("0004.jpg", "OCR-D-IMG-bengel_abriss01_1751-0007.jpg")


@pytest.fixture(scope="module")
def moreno(shared_data: Path) -> list[tuple[E.Page, list[F.Region]]]:
    E.DATA = shared_data
    return [(p, F.candidates(E.load_preview(shared_data / p.name))) for p in E.moreno_pages()]


def test_chapbook_woodcuts_found_tight_and_nothing_else(moreno) -> None:
    s = E.score((p.truth, [r.box for r in regions if r.kept]) for p, regions in moreno)
    assert s["pictures2"] >= 60
    assert s["recall2"] >= MIN_RECALL, s
    assert s["median_iou"] >= MIN_IOU, s
    assert s["precision"] >= MIN_PRECISION, s
    assert s["text_clean"] >= MIN_TEXT_CLEAN, s


def test_regions_follow_the_contract(moreno) -> None:
    for _page, regions in moreno:
        for r in regions:
            assert r.kind in F.KINDS
            assert 0.0 <= r.box[0] < r.box[2] <= 1.0 and 0.0 <= r.box[1] < r.box[3] <= 1.0
            assert 0.0 <= r.score <= 1.0
            assert (r.reason == "") == r.kept
    # three woodcuts side by side, nearly touching: three crops, left to right
    regions = next(r for p, r in moreno if p.name.endswith("Moreno_007_1.jpg"))
    lefts = [r.box[0] for r in regions if r.kept]
    assert len(lefts) == 3 and lefts == sorted(lefts)


def test_ornaments_are_candidates_not_pictures(moreno) -> None:
    """The cross on 0001_Moreno_225_1 is the picture; the fleuron panels beside it are not."""
    regions = next(r for p, r in moreno if p.name.endswith("0001_Moreno_225_1.jpg"))
    assert len([r for r in regions if r.kept]) == 1
    ornaments = [r for r in regions if r.reason == "ornament"]
    assert len(ornaments) >= 2 and all(r.kind == "ornament" and not r.kept for r in ornaments)


def test_text_pages_yield_no_crop(shared_data: Path) -> None:
    dta = sorted((shared_data / "pages" / "dta_text").glob("*.png"))[::4]
    ocrd = [p for p in sorted((shared_data / "pages" / "ocrd").glob("*/*.jpg"))
            if p.name not in OCRD_WITH_PICTURES]
    assert len(dta) >= 25 and len(ocrd) >= 8
    with_crops = [p.name for p in dta + ocrd if F.figures(E.load_preview(p))]
    assert with_crops == []


@pytest.mark.parametrize("mode", ["colour", "binarized"])
def test_two_woodcuts_side_by_side_give_two_exact_boxes(shared_data: Path, mode: str) -> None:
    from bench import composites

    E.DATA = composites.DATA = shared_data
    page = composites.sample("pair", mode)
    found = F.figures(page.preview())
    assert len(found) == 2
    for truth, region in zip(page.boxes, found, strict=True):
        assert E.iou(truth, region.box) >= 0.8


def test_three_woodcuts_side_by_side_on_a_chapbook_give_three_crops(shared_data: Path
                                                                       ) -> None:
    """Moreno 285 f1: the second and third woodcuts touch at a hair of paper; a text
    height rounded to whole pixels (4 px at the preview) merged them into one crop."""
    E.DATA = shared_data
    page = next(p for p in E.moreno_pages() if p.name.endswith("Moreno_285_1.jpg"))
    kept = [r.box for r in F.figures(E.load_preview(shared_data / page.name))]
    assert len(kept) == len(page.truth) == 3
    assert len(E.match(page.truth, kept)) == 3


def test_the_text_height_lies_between_whole_pixels() -> None:
    """Glyphs of a preview are 4 or 5 px tall by where their edges fall: the page's text
    height moves with the share of each, not in whole-pixel steps (a 4-6 px height is
    a quarter apart between two scans of one page, and every rule counts in it)."""
    def stats(fours: int, fives: int) -> np.ndarray:
        hs = [4] * fours + [5] * fives
        return np.array([[10 * i, 10, 3, h, 3 * h] for i, h in enumerate(hs)])

    shape = (400, 300)
    heights = [text_height(stats(n, 100 - n), shape) for n in (90, 70, 50, 30, 10)]
    assert all(4.0 <= h <= 5.0 for h in heights)
    assert all(a < b for a, b in zip(heights, heights[1:], strict=False))  # one each
    assert text_height(stats(100, 0), shape) == pytest.approx(4.0)


@pytest.mark.parametrize("image", [
    Image.new("RGB", (300, 400), "white"),
    Image.new("RGB", (300, 400), "black"),
    Image.new("RGB", (1, 1)),
    Image.new("L", (2, 900), 0),
    Image.new("1", (240, 360), 1),
    Image.new("RGBA", (240, 360), (0, 0, 0, 0)),
    Image.new("CMYK", (240, 360), (0, 0, 0, 255)),
    Image.new("P", (240, 360)),
    Image.fromarray(np.linspace(0, 65535, 240 * 360).reshape(360, 240).astype(np.uint16)),
    Image.fromarray((np.random.default_rng(0).random((360, 240)) * 255).astype(np.uint8)),
], ids=["blank", "black", "1x1", "sliver", "mode-1", "rgba", "cmyk", "palette", "i16", "noise"])
def test_odd_inputs_return_a_list(image: Image.Image) -> None:
    out = F.candidates(image)
    assert isinstance(out, list)
    assert all(isinstance(r, F.Region) for r in out)
    assert F.figures(image) == [r for r in out if r.kept]


@pytest.mark.parametrize("rows, seed", [((13, 52, 50), 1), ((13, 53, 51), 2)])
def test_a_scene_of_three_standing_figures_is_no_title_line(shared_data: Path, rows, seed
                                                             ) -> None:
    """Chapbook 066's woodcut of three people, binarized in a row of three woodcuts set 8
    text heights tall: its three figures are as tall as the box and side by side, like a
    title line's letters, but hatched (two of them 4 holes, a letter has two at most).
    Judged lettering, the whole woodcut was lost (it was on a149857-5c19118)."""
    from bench import composites

    composites.DATA = shared_data
    page = composites.sample("triple", "binarized", figure_rows=rows,
                             page="feuerbach_recht_1801_0176", seed=seed)
    found = F.figures(page.preview())
    assert any(E.iou(page.boxes[0], r.box) >= 0.8 for r in found)


def test_a_binarized_page_keeps_its_woodcut(shared_data: Path) -> None:
    """The same woodcut, thresholded to 1 bit the way binarized books are, is still found."""
    from bench import composites

    composites.DATA = shared_data
    page = composites.sample("inline", "binarized", figure_rows=(2,))
    found = F.figures(page.preview())
    assert len(found) == 1 and E.iou(page.boxes[0], found[0].box) >= 0.8


@pytest.mark.parametrize("scan", ["470 px", "520 px", "re-encoded, JPEG 90", "grey",
                                  "cool white balance", "double resolution"])
def test_a_framed_woodcut_with_a_clean_gap_down_it_is_one_crop(shared_data, scan):
    """Moreno 122_1's woodcut: a curtain's edge against bare paper leaves a column clean
    from the top frame line down to the floor. Taken for a channel between two woodcuts,
    it split the picture in two crops (its left fifth alone) at these sizes and scans; the
    frame and the floor running across it tie it into one."""
    from bench import figure_robustness as R
    from bench.figure_scales import at_side

    E.DATA = R.DATA = shared_data
    page = next(p for p in E.moreno_pages() if p.name.endswith("Moreno_122_1.jpg"))
    if scan.endswith(" px"):
        preview = at_side(page, int(scan.split()[0]))
        found = F.find(preview, closer=page.closer())
    else:
        data = R.rescan((shared_data / page.name).read_bytes(), scan)
        found = F.find(R.scan_preview(data), closer=lambda side: R.scan_preview(data, side))
    kept = [r.box for r in found.regions if r.kept]
    assert len(kept) == 1 and E.iou(kept[0], page.truth[0]) >= 0.9, kept


@pytest.mark.parametrize("deg", [0.75, -0.75])
def test_a_cartouche_whose_frame_broke_on_the_scan_is_one_ornament(shared_data, deg):
    """Moreno 279_4's "FIN." cartouche, scanned a little askew: its thin scroll lines
    break, its halves are two shapes, and neither alone is symmetric: two crops. The
    frame's lines still cross the gap between them, and the two together are mirrored
    both ways, as a frame is: one ornament, and the page has no crop."""
    from bench import figure_robustness as R

    E.DATA = R.DATA = shared_data
    way = f"skew {deg:g} deg"
    R.CHANGES.setdefault(way, (R._skew(deg), 90, R._skew_box(deg)))
    page = next(p for p in E.moreno_pages() if p.name.endswith("Moreno_279_4.jpg"))
    data = R.rescan((shared_data / page.name).read_bytes(), way)
    found = F.find(R.scan_preview(data), closer=lambda side: R.scan_preview(data, side))
    assert not page.truth and not [r for r in found.regions if r.kept]
    cartouche = [r for r in found.regions if r.reason == "ornament"]
    assert len(cartouche) == 1 and cartouche[0].box[2] - cartouche[0].box[0] > 0.55


def test_a_headpiece_of_cast_fleurons_is_one_ornament(shared_data: Path) -> None:
    """OCR-D bengel 1751 p7's headpiece: a row of fleurons with stars and end pieces
    between them, a little apart, so two or three of its blocks were seeds, each judged
    alone, and one was kept as an engraving. The row within its own height, grown over
    its stars, is a band that mirrors about its middle: one ornament, and the page's
    one crop is its historiated initial."""
    path = next((shared_data / "pages" / "ocrd").rglob("OCR-D-IMG-bengel_abriss01_1751-0007.jpg"))
    regions = F.candidates(E.load_preview(path))
    head = [r for r in regions if r.box[3] < 0.25]
    assert len(head) == 1 and head[0].reason == "ornament" and not head[0].kept
    assert head[0].box[0] < 0.15 and head[0].box[2] > 0.85  # the band end to end
    kept = [r.box for r in regions if r.kept]
    assert len(kept) == 1 and kept[0][1] > 0.5  # the initial, low on the page
