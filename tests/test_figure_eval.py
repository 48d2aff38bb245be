"""bench.figure_eval and bench.figure_loso: the scoring helpers on hand-made boxes, and the
splits (a page or a source is never scored at a grid point chosen with it)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from archive import figures as F
from bench import figure_eval as E
from bench import figure_loso as L

T1, T2, T3 = (0.1, 0.1, 0.4, 0.4), (0.5, 0.5, 0.9, 0.9), (0.1, 0.6, 0.3, 0.9)
FAR = (0.0, 0.0, 0.02, 0.02)


def region(box: E.Box, kept: bool, kind: str = "engraving", reason: str = "") -> F.Region:
    return F.Region(box, 0.9 if kept else 0.3, kind, kept, reason)


def test_match_is_one_to_one_and_best_pairs_first() -> None:
    near_t1 = (0.1, 0.1, 0.4, 0.42)  # IoU 0.94 with T1
    between = (0.1, 0.1, 0.45, 0.45)  # IoU 0.73 with T1, 0 with T2
    m = E.match([T1, T2], [between, near_t1])
    assert [(i, j) for i, j, _v in m] == [(0, 1)]  # T1 takes its best box; T2 has none
    assert m[0][2] == pytest.approx(0.09 / 0.096)
    assert E.match([T1], [(0.1, 0.1, 0.4, 0.75)]) == []  # IoU 0.46: under 0.5


def test_score_counts_pictures_crops_and_clean_text_pages() -> None:
    small = (0.0, 0.0, 0.1, 0.1)  # 1% of the page: not in recall>=2%
    s = E.score([([T1, small], [T1, FAR]),  # T1 found, small missed, one false crop
                 ([T2], [T2]),
                 ([], []),  # a clean text page
                 ([], [T3])])  # a text page with a crop
    assert (s["pictures"], s["pictures2"], s["kept"], s["text_pages"]) == (3, 2, 4, 2)
    assert s["recall"] == pytest.approx(2 / 3)
    assert s["recall2"] == 1.0
    assert s["precision"] == 0.5
    assert s["text_clean"] == 0.5
    assert s["median_iou"] == 1.0


def test_miss_split_tells_proposal_misses_from_verdict_misses() -> None:
    regions = [region(T1, True),
               region((0.5, 0.5, 0.9, 0.85), False, "ornament", "ornament"),  # IoU 0.875
               region((0.5, 0.5, 0.9, 0.7), False, "engraving", "text_block"),  # IoU 0.5
               region((0.1, 0.6, 0.3, 0.7), False, "engraving", "too_small")]  # IoU 0.33 with T3
    found, proposed, why = L.miss_split([T1, T2, T3], regions)
    assert (found, proposed) == (1, 2)  # T3: a proposal miss
    assert why == ["ornament (ornament)"]  # T2: the best candidate not kept names the verdict


def test_miss_split_a_kept_box_taken_by_another_picture() -> None:
    twin = (0.1, 0.1, 0.4, 0.38)  # T1 and its twin both near the one kept box
    found, proposed, why = L.miss_split([T1, twin], [region(T1, True)])
    assert (found, proposed, why) == (1, 2, ["kept, matched to another picture"])
    assert L.miss_split([], [region(T1, True)]) == (0, 0, [])


def test_loso_training_never_holds_the_source_or_its_tied_one() -> None:
    names = ["figures/moreno", "figures/early", "figures/other_sources", "composites"]
    train = L.loso_training(names)
    for name, fit in train.items():
        assert name not in fit
        assert not set(fit) & L.TIED.get(name, frozenset())
    assert train["composites"] == ["figures/early", "figures/other_sources"]
    assert train["figures/early"] == ["figures/moreno", "figures/other_sources", "composites"]
    with pytest.raises(ValueError):
        L.loso_training(["composites", "figures/moreno"])


def grid(good: int, pages: int = 2) -> tuple[E.Grid, list[list[E.Box]]]:
    """A source of one-picture pages that only grid combination ``good`` finds."""
    truths = [[T1] for _ in range(pages)]
    return [[[T1] if ci == good else [FAR] for _ in range(pages)]
            for ci in range(len(E.COMBOS))], truths


def noise(seed: int, pages: int = 2) -> tuple[E.Grid, list[list[E.Box]]]:
    rng = random.Random(seed)
    return [[[T1] if rng.random() < 0.5 else [FAR] for _ in range(pages)]
            for _ci in range(len(E.COMBOS))], [[T1] for _ in range(pages)]


TIED = {"a": frozenset({"b"}), "b": frozenset({"a"})}


def test_leave_one_source_out_weighs_each_training_source_the_same() -> None:
    data = {"a": grid(3), "b": grid(3), "c": grid(11), "d": grid(7), "e": grid(7)}
    out = L.loso_raw(data, TIED)
    assert out["a"][0] == (7, 0.0)  # two of c, d, e find at 7 (unpadded boxes are exact)
    assert E.score(out["a"][1])["recall"] == 0.0  # a itself only finds at 3
    assert out["c"][0][0] == 3  # a, b, d, e: 3 and 7 two each; 3 comes first in the grid


def test_leave_one_source_out_never_chooses_with_the_left_out_source() -> None:
    # c and d disagree, so one more vote (a's own, or b's, tied to it) would decide
    base = {"c": grid(11), "d": grid(7)}
    chosen = set()
    for a, b in ((grid(7), grid(7)), (grid(11), grid(11)), (noise(1), noise(2)),
                 (grid(11), grid(7))):
        out = L.loso_raw({"a": a, "b": b, **base}, TIED)
        chosen.add(out["a"][0])
        chosen.add(out["b"][0])
    assert chosen == {(7, 0.0)}
    moved = L.loso_raw({"a": grid(7), "b": grid(7), "c": grid(11), "d": grid(11)}, TIED)
    assert moved["a"][0] == (11, 0.0)  # what its training sources hold does move it


def test_book_grouped_cv_never_chooses_with_the_held_book() -> None:
    raw, truths = grid(5, pages=5)
    groups = ["x", "y", "y", "z", "z"]
    for ci in range(len(E.COMBOS)):  # the book x is only found at combination 2
        raw[ci][0] = [T1] if ci == 2 else [FAR]
    held, chosen = E.grouped_cv_raw(raw, truths, groups)
    assert E.score(held[:1])["recall"] == 0.0  # x scored at 5, chosen on y and z
    assert E.score(held[1:])["recall"] == 1.0
    assert sum(chosen.values()) == 3
    assert {v for (v, _pad) in chosen} == {tuple(E.COMBOS[5].values())}


def test_other_sources_are_read_by_book_with_only_pictures_as_truth(shared_data: Path) -> None:
    E.DATA = shared_data
    pages = E.other_pages()
    assert len(pages) == 75
    assert sum(len(p.truth) for p in pages) == 29
    assert sum(len(p.ornaments) for p in pages) == 27 + 225 + 9  # ornaments, initials, stamps
    assert len({p.group for p in pages}) == 33
    assert all((shared_data / p.name).is_file() for p in pages)
    assert all(0 <= b[0] < b[2] <= 1 and 0 <= b[1] < b[3] <= 1 for p in pages for b in p.truth)


def test_text_book_drops_the_page_number() -> None:
    assert L.text_book("dilthey_geisteswissenschaften_1883_0390") == \
        "dilthey_geisteswissenschaften_1883"
    assert L.text_book("OCR-D-IMG-corvinus_frauenzimmer_1715-0054") == \
        "OCR-D-IMG-corvinus_frauenzimmer_1715"
