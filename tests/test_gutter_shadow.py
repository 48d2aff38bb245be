"""A page curving into the gutter: its side darkened, its print running on into the shadow.

Real pages of figures/early and figures/moreno (CC0), as published and with the gutter
shadows of the robustness bench (numbers: python -m bench.figure_robustness --cut
--gutter --only gutter). A facing page meets the page at its edge, so nothing printed on
the page runs across a facing-page cut; where print does, the cut lay inside the page.
The page extent does not know that yet (README, "A page curving into the gutter": a rule
that moved such cuts out was measured and not shipped), so the cases it gets wrong are
strict xfails: each passes once the extent stops cutting through the page's print.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from archive import figures as F
from bench import figure_eval as E
from bench import figure_robustness as R

LEFT, RIGHT = "gutter shadow left (40%, a tenth)", "gutter shadow right (60%, 15%)"


def found_on(shared_data: Path, name: str, way: str = "as published"
             ) -> tuple[E.Page, F.Finding]:
    """The labelled page and what the finder finds on its scan made ``way``, read as the
    reader reads it (a finer decode at hand)."""
    E.DATA = shared_data
    page = next(p for p in E.moreno_pages() + E.early_pages() if p.name.endswith(name))
    data = R.rescan((shared_data / page.name).read_bytes(), way)
    return page, F.find(R.scan_preview(data), closer=lambda side: R.scan_preview(data, side))


def kept(found: F.Finding) -> list[F.Box]:
    return [r.box for r in found.regions if r.kept]


THROUGH_PRINT = pytest.mark.xfail(
    strict=True, reason="a facing-page cut still runs through the page's own print")


@THROUGH_PRINT
@pytest.mark.parametrize(("name", "way", "pictures"), [
    # a title running to the scan's edge, a red stamp at the foot: the cut went through
    # both, and the stamp, cut in two, was an engraving
    ("bpt6k6551882q_f5.jpg", LEFT, 1),
    # a woodcut near the shadowed side: the cut split it in two crops
    ("Moreno_122_1.jpg", LEFT, 1),
    # a text page: the shadowed corner beside the cut was a crop
    ("Moreno_136_3.jpg", RIGHT, 0),
])
def test_print_running_into_a_gutter_shadow_keeps_the_page_whole(shared_data, name, way,
                                                                  pictures):
    page, found = found_on(shared_data, name, way)
    x0, _y0, x1, _y1 = found.page
    assert x0 <= 0.03 and x1 >= 0.95  # before: 0.054-0.072 cut off the shadowed side
    boxes = kept(found)
    matched = E.match(page.truth, boxes)
    assert len(page.truth) == len(boxes) == len(matched) == pictures
    assert all(iou >= 0.85 for _t, _p, iou in matched)


@THROUGH_PRINT
def test_a_facing_page_cut_never_runs_through_the_frontispiece(shared_data):
    """btv1b8610802d f7 as published: the engraving's left side is shaded as the leaf
    curves, and the page extent (the manifest's ``page_bbox``) left out its first 7% as a
    facing page."""
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
