"""The figure finder's second look: a small crop may be taken back, nothing is added.

Real pages of figures/early (CC0), some at other preview sizes the way
bench/figure_scales.py shows them (numbers: python -m bench.figure_scales).
"""

from __future__ import annotations

import pytest

from archive.boxes import area, iou
from archive.figures import finder as F
from archive.figures import second_look as S
from bench import figure_eval as E
from bench import figure_scales


def page_named(shared_data, name: str) -> E.Page:
    E.DATA = shared_data
    return next(p for p in E.early_pages() if p.name.endswith(name))


def test_an_initial_one_preview_size_makes_a_picture_is_taken_back(shared_data):
    """bpt6k1521441j f40 (a decorative page, no picture) at a 600 px preview: its upper
    cadel (a letter drawn in flourishes, the text running on beside it) passes as a
    picture at that preview's text height, its lines beside it too few for its height;
    at 1.25 times the preview it is an initial, so no crop is left. (At 420 px and at
    half resolution, this test's page before, the first look now calls it an initial
    itself: ``ornaments._hung``.)"""
    preview = figure_scales.at_side(
        page_named(shared_data, "bpt6k1521441j_bpt6k1521441j_f40.jpg"), 600)
    first = [r for r in F._look(preview, F.DEFAULT_MIN_AREA).regions if r.kept]
    assert len(first) == 1 and area(first[0].box) < S.DOUBT_AREA
    found = F.find(preview).regions
    assert not any(r.kept for r in found)
    back = max(found, key=lambda r: iou(r.box, first[0].box))
    assert back.box == first[0].box and back.reason == "initial"
    assert back.score < F.THRESHOLD  # a curator's own threshold does not bring it back


@pytest.mark.parametrize("side", [None, 420])
def test_the_second_look_keeps_every_picture_of_the_early_books(shared_data, side):
    """As published, and at 420 px (the preview size where the first look keeps the most
    crops that are no picture), every crop the first look matches to a boxed picture
    stays kept."""
    E.DATA = shared_data
    for page in E.early_pages():
        preview = (E.load_preview(shared_data / page.name) if side is None
                   else figure_scales.at_side(page, side))
        first = [r.box for r in F._look(preview, F.DEFAULT_MIN_AREA).regions if r.kept]
        kept = [r.box for r in F.find(preview).regions if r.kept]
        pictures = {j for _i, j, _ in E.match(page.truth, first)}
        assert all(first[j] in kept for j in pictures), page.name


def test_a_piece_of_a_tailpiece_is_taken_back_at_another_size(shared_data):
    """Moreno 279 f4 ends with a tailpiece of flourishes around FIN. At 470 px its right
    scroll is a crop of its own at the first look (the lines that join it to the rest
    break on the preview); at 1.25 times it is inside the whole tailpiece, which that
    look calls an ornament and keeps nothing over, so it is no crop. (At 375 px the first
    look had both halves as crops; it mends them into one ornament itself now:
    ``picture_boxes._mended_frames``.)"""
    E.DATA = shared_data
    page = next(p for p in E.moreno_pages() if p.name.endswith("Moreno_279_4.jpg"))
    assert not page.truth
    preview = figure_scales.at_side(page, 470)
    first = [r for r in F._look(preview, F.DEFAULT_MIN_AREA).regions if r.kept]
    assert len(first) == 1 and area(first[0].box) < S.DOUBT_AREA
    found = F.find(preview).regions
    assert not any(r.kept for r in found)
    back = next(r for r in found if r.box == first[0].box)
    assert (back.kind, back.reason) == ("ornament", "ornament")
    halves = [r for r in F._look(figure_scales.at_side(page, 375),
                                 F.DEFAULT_MIN_AREA).regions if r.reason == "ornament"]
    assert len(halves) == 1 and not any(r.kept for r in halves)


def test_a_page_whose_crops_are_all_big_is_looked_at_once(shared_data, monkeypatch):
    """A full-page woodcut (bpt6k15260973 f19) costs one finder pass, not two."""
    preview = E.load_preview(
        shared_data / page_named(shared_data, "bpt6k15260973_f19.jpg").name)
    looks = []
    look = F._look
    monkeypatch.setattr(F, "_look", lambda page, area, *a, **kw: looks.append(page.size)
                        or look(page, area, *a, **kw))
    kept = [r for r in F.find(preview).regions if r.kept]
    assert kept and all(area(r.box) >= S.DOUBT_AREA for r in kept)
    assert looks == [preview.size]


def region(box, kept=True, reason="", score=0.9, kind="engraving") -> F.Region:
    return F.Region(box, score, kind, kept, reason)


def test_the_veto_only_takes_back_small_crops_the_other_look_calls_no_picture():
    small, big = (0.1, 0.1, 0.3, 0.3), (0.1, 0.1, 0.9, 0.9)
    initial = region(small, kept=False, reason="initial", score=0.3, kind="ornament")
    assert S.veto([region(small)], [initial]) == [initial]
    assert S.veto([region(small)], []) == [region(small)]  # a miss changes nothing
    elsewhere = region((0.5, 0.5, 0.7, 0.7), kept=False, reason="ornament", score=0.3)
    assert S.veto([region(small)], [elsewhere]) == [region(small)]  # nothing seen there
    assert S.veto([region(small)], [region(small)]) == [region(small)]
    too_small = region(small, kept=False, reason="too_small", score=0.3)
    assert S.veto([region(small)], [too_small]) == [region(small)]  # size is no verdict
    big_initial = region(big, kept=False, reason="ornament", score=0.3)
    assert S.veto([region(big)], [big_initial]) == [region(big)]  # never looked at


def test_a_small_crop_the_other_look_sees_as_part_of_no_picture_is_taken_back():
    """Where the other look keeps less than half of a small crop and judges half of it or
    more part of a box that is no picture (a tailpiece, a title), the crop goes with that
    box's verdict; where a kept crop of the other look covers most of it (two woodcuts cut
    apart at one scale, together at the other), or the no-picture box covers only an edge
    of it, it stays."""
    small = (0.1, 0.1, 0.3, 0.3)
    title = region((0.05, 0.1, 0.6, 0.25), kept=False, reason="lettering", score=0.1)
    assert S.veto([region(small)], [title]) == [
        region(small, kept=False, reason="lettering", score=0.1)]
    shifted = region((0.15, 0.1, 0.35, 0.3))  # kept, covering 75% of the crop
    assert S.veto([region(small)], [title, shifted]) == [region(small)]
    sliver = region((0.25, 0.1, 0.45, 0.3))  # kept, covering 25% of it
    assert not S.veto([region(small)], [title, sliver])[0].kept
    rule = region((0.1, 0.26, 0.3, 0.3), kept=False, reason="rule", score=0.05)
    assert S.veto([region(small)], [rule]) == [region(small)]  # an edge of it
    smaller = region((0.12, 0.12, 0.28, 0.28), kept=False, reason="too_small", score=0.1)
    assert S.veto([region(small)], [smaller]) == [region(small)]  # still no verdict
    outside = region((0.0, 0.0, 0.35, 1.0), kept=False, reason="outside_page", score=0.05)
    assert S.veto([region(small)], [outside]) == [region(small)]  # an extent can move
