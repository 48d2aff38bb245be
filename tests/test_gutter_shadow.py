"""A page curving into the gutter: its side darkened, its print running on into the shadow.

Real pages of figures/early and figures/moreno (CC0), as published and with the gutter
shadows of the robustness bench (numbers: python -m bench.figure_robustness --cut
--gutter --only gutter). A facing page meets the page at its edge, so nothing printed on
the page runs across a facing-page cut; where print does, the cut lay inside the page,
and the page extent moves it out past that print (``extent._past_print``). Two
shadowed pages are still read wrong, by the finder rather than the extent: their cut
lies in a blank margin, through no print, and they are strict xfails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archive import figures as F
from bench import figure_eval as E
from bench import figure_robustness as R

LEFT, RIGHT = "gutter shadow left (40%, a tenth)", "gutter shadow right (60%, 15%)"


def page_named(shared_data: Path, name: str) -> E.Page:
    E.DATA = shared_data
    return next(p for p in E.moreno_pages() + E.early_pages() if p.name.endswith(name))


def found_on(shared_data: Path, name: str, way: str = "as published"
             ) -> tuple[E.Page, F.Finding]:
    """The labelled page and what the finder finds on its scan made ``way``, read as the
    reader reads it (a finer decode at hand)."""
    page = page_named(shared_data, name)
    data = R.rescan((shared_data / page.name).read_bytes(), way)
    return page, F.find(R.scan_preview(data), closer=lambda side: R.scan_preview(data, side))


def kept(found: F.Finding) -> list[F.Box]:
    return [r.box for r in found.regions if r.kept]


def keeps_the_page_whole(found: F.Finding, page: E.Page, pictures: int) -> None:
    x0, _y0, x1, _y1 = found.page
    assert x0 <= 0.03 and x1 >= 0.95  # before: 0.054-0.072 cut off the shadowed side
    boxes = kept(found)
    matched = E.match(page.truth, boxes)
    assert len(page.truth) == len(boxes) == len(matched) == pictures
    assert all(iou >= 0.85 for _t, _p, iou in matched)


def test_a_title_and_a_stamp_running_into_the_shadow_keep_the_page_whole(shared_data):
    """bpt6k6551882q f5 under a shadow on the left: the title runs to the scan's edge and
    a red stamp sits at the foot; the cut went through both (at 160 px the title's first
    letter and a stroke of the stamp cross it), and the stamp, cut in two, was an
    engraving."""
    page, found = found_on(shared_data, "bpt6k6551882q_f5.jpg", LEFT)
    keeps_the_page_whole(found, page, 1)


IN_THE_MARGIN = pytest.mark.xfail(strict=True, reason=(
    "the cut lies in the shadowed margin, through no print; the finder reads the page "
    "differently for it (a channel test on a knife edge, a shadowed corner)"))


@IN_THE_MARGIN
@pytest.mark.parametrize(("name", "way", "pictures"), [
    # a woodcut near the shadowed side: with the margin cut off, it is split in two crops
    ("Moreno_122_1.jpg", LEFT, 1),
    # a text page: the shadowed corner beside the cut was a crop
    ("Moreno_136_3.jpg", RIGHT, 0),
])
def test_a_shadowed_margin_keeps_the_page_whole(shared_data, name, way, pictures):
    page, found = found_on(shared_data, name, way)
    keeps_the_page_whole(found, page, pictures)


def test_a_facing_page_cut_never_runs_through_the_frontispiece(shared_data):
    """btv1b8610802d f7 as published: the engraving's left side is shaded as the leaf
    curves, and the page extent (the manifest's ``page_bbox``) left out its first 7% as a
    facing page; the engraving's strokes cross that cut."""
    page, found = found_on(shared_data, "btv1b8610802d_f7.jpg")
    assert found.page[0] <= page.truth[0][0]
    assert len(E.match(page.truth, kept(found))) == 1


def test_the_page_edge_glued_to_a_last_letter_leaves_the_facing_page_out(shared_data):
    """Wolfenbüttel page 10: the title's last letter touches the page's dark edge, and
    the edge line runs down into the facing page's roundel: whatever moves a cut out past
    the page's print must not take that line for print, or the cut runs into the facing
    page (the extent then reached 0.87 of the width, past the page edge at 0.83)."""
    _page, found = found_on(shared_data, "qun-607-5_00001-00179.pdf_page_10.jpg")
    assert found.page[2] <= 0.85
    assert not kept(found)


def test_specks_at_the_page_corners_are_no_print_across_the_cut(shared_data):
    """bpt6k15201149 f26 at 600 px: the book's edge beside the page is cut off (3%); two
    specks at the page's corners cross that cut, and taken for print they moved it out to
    the image's edge, which put the margin stain on the page as a crop."""
    from bench.figure_scales import at_side

    found = F.find(at_side(page_named(shared_data, "bpt6k15201149_f26.jpg"), 600))
    assert 0.95 <= found.page[2] <= 0.98
    assert not kept(found)


def test_the_arms_under_a_shadow_are_an_ornament_wherever_the_page_ends(shared_data):
    """bpt6k6127905 f2 under the right gutter shadow: the page's edge is cut at 0.92, and
    the arms of Toul, which fill more than 15% of that page but not of the image, were no
    longer compared with their mirror turned (``MEASURES.mirror_turned``, a guard on
    the cost), read less symmetric (lr 0.446 against 0.45) and were a crop."""
    page, found = found_on(shared_data, "bpt6k6127905_f2.jpg", RIGHT)
    assert found.page[2] < 0.95  # the shadowed side still cut off
    assert not kept(found)
    arms = page.ornaments[0]
    assert any(r.kind == "ornament" and E.iou(r.box, arms) >= 0.6 for r in found.regions)
