"""Scans a little out of focus: real pages of figures/moreno and figures/early (CC0)
blurred as another library's camera may leave them, 1 or 2 px a 1,000 px of the scan
(numbers: python -m bench.figure_robustness --cut --focus --only "soft focus (1 px)"
"soft focus (2 px)")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from archive import figures as F
from archive.figures import focus
from bench import figure_eval as E
from bench import figure_robustness as R


def soft_scan(shared_data: Path, name: str, px: int) -> tuple[E.Page, bytes]:
    """The labelled page and its scan blurred ``px`` a 1,000 px, as the focus bench makes
    it (``figure_robustness.FOCUS``)."""
    E.DATA = shared_data
    page = next(p for p in E.moreno_pages() + E.early_pages() if p.name.endswith(name))
    return page, R.rescan((shared_data / page.name).read_bytes(), f"soft focus ({px} px)")


def kept(data: bytes) -> list:
    """The kept boxes, read as the reader reads the scan (a finer decode at hand)."""
    found = F.find(R.scan_preview(data), closer=lambda side: R.scan_preview(data, side))
    return [r.box for r in found.regions if r.kept]


@pytest.mark.parametrize(("name", "pictures"), [
    ("Moreno_180_1.jpg", 2),  # two woodcuts side by side: the blur filled their channel
    ("Moreno_119_1.jpg", 3),  # three, two of them side by side
])
def test_chapbook_woodcuts_in_soft_focus_are_each_a_crop(shared_data, name, pictures):
    """Unsharpened, the blur joined side-by-side woodcuts into one crop (0.5 IoU)."""
    page, data = soft_scan(shared_data, name, 1)
    boxes = kept(data)
    matched = E.match(page.truth, boxes)
    assert len(page.truth) == len(boxes) == len(matched) == pictures
    assert min(iou for _t, _p, iou in matched) >= 0.85


@pytest.mark.parametrize(("name", "pictures"), [
    ("bpt6k15223596_f39.jpg", 0),  # a text page: a text column was a crop
    ("bpt6k15223596_f23.jpg", 0),  # ornaments only: an initial with its lines was a crop
    ("bpt6k15223596_f26.jpg", 1),  # a miniature: a second crop of text beside it
])
def test_early_pages_in_soft_focus_keep_their_crops(shared_data, name, pictures):
    page, data = soft_scan(shared_data, name, 2)
    boxes = kept(data)
    assert len(boxes) == len(page.truth) == pictures
    assert all(iou >= 0.85 for _t, _p, iou in E.match(page.truth, boxes))


def test_a_pale_woodcut_in_soft_focus_is_not_a_stain(shared_data):
    """Moreno 122: a pale woodcut over black text. Unsharpened, the blur moved the strong
    ink's threshold above the woodcut, which was then faint ink only, a stain: no crop.
    Sharpened it is found (its curtain at the left comes out as a crop of its own)."""
    page, data = soft_scan(shared_data, "Moreno_122_1.jpg", 1)
    boxes = kept(data)
    x0, y0, x1, y1 = page.truth[0]
    covered = sum(E.area((max(x0, b[0]), max(y0, b[1]), min(x1, b[2]), min(y1, b[3])))
                  for b in boxes if b[0] < x1 and b[2] > x0 and b[1] < y1 and b[3] > y0)
    assert covered >= 0.9 * E.area(page.truth[0])
    assert all(E.overlap(b, page.truth[0]) >= 0.9 for b in boxes)


def test_a_soft_page_is_sharpened_to_the_aim_and_a_sharp_one_left_alone(shared_data):
    """The measure reads the blur, not the page: as published the chapbook page is in
    focus (no sharpening); blurred it is soft, and the amount chosen brings it back."""
    page, data = soft_scan(shared_data, "Moreno_180_1.jpg", 1)
    sharp = np.asarray(E.load_preview(shared_data / page.name).convert("L"))
    assert focus.amount(sharp) == 0.0
    assert focus.sharpness(sharp) >= focus.AIM
    grey = np.asarray(R.scan_preview(data).convert("L"))
    assert focus.sharpness(grey) < focus.SOFT
    amount = focus.amount(grey)
    assert amount in focus.AMOUNTS
    assert focus.sharpness(focus.sharpen(grey, amount)) >= 0.95 * focus.AIM


def test_focus_is_not_read_from_a_page_without_glyphs():
    """Blank paper, or a photograph with no text, says nothing about the camera's focus."""
    blank = np.full((400, 300), 235, np.uint8)
    assert focus.sharpness(blank) is None
    assert focus.amount(blank) == 0.0
