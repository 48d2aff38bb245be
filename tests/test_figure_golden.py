"""The figure finder's regions on every shared page against the golden snapshot (issue 61).

A change to the finder that moves any page fails here with what it moved, page by page;
a change made on purpose regenerates the snapshot: ``python -m bench.figure_golden
--write`` (and the diff of ``tests/golden/figure_regions.json`` shows it to the reviewer).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from archive import figures as F
from bench import figure_golden as G
from bench.figure_eval import with_params


@pytest.fixture(scope="module")
def golden() -> G.Snapshot:
    return G.load()


def test_the_snapshot_covers_every_shared_page_file(shared_data: Path, golden: G.Snapshot
                                                    ) -> None:
    files = G.page_files(shared_data)
    assert len(files) >= 425  # the five sets as shared: 116 + 103 + 75 + 120 + 11
    assert {G.source_of(f) for f in files} == set(G.SOURCES)
    gaps = G.coverage(golden, files)
    assert not gaps, "\n".join(gaps)


def test_every_shared_page_gives_its_golden_regions(shared_data: Path, golden: G.Snapshot
                                                    ) -> None:
    pages = sorted(set(golden).intersection(G.page_files(shared_data)))
    changes = G.compare(golden, G.take(shared_data, pages, progress=False))
    assert not changes, ("the finder's regions differ from tests/golden/figure_regions.json "
                         "(on purpose? python -m bench.figure_golden --write):\n"
                         + G.summary(changes, pages))


def test_a_finder_change_is_named_page_by_page(shared_data: Path, golden: G.Snapshot) -> None:
    """The comparison can fail: a wider pad moves a real page's kept box, and a higher
    threshold drops it; the summary names the page, the crop and what happened to it."""
    rel = next(r for r in sorted(golden) if any(x["kept"] for x in golden[r]["regions"]))
    wide = with_params({"pad": F.PARAMS["pad"] + 0.05},
                       lambda: G.take(shared_data, [rel], progress=False))
    text = G.summary(G.compare(golden, wide), [rel])
    assert text.startswith("1 of 1 pages changed") and rel in text
    assert "kept at [" in text and "box moved (IoU" in text

    dropped = {rel: {**golden[rel], "regions": [{**x, "kept": False, "reason": "ornament"}
                                                for x in golden[rel]["regions"]]}}
    assert "now dropped (ornament)" in G.summary(G.compare(golden, dropped), [rel])


def test_a_new_page_file_asks_for_the_snapshot_again(shared_data: Path, golden: G.Snapshot,
                                                     tmp_path: Path) -> None:
    page = tmp_path / "pages" / "ocrd" / "new_book" / "INPUT_0001.jpg"
    page.parent.mkdir(parents=True)
    shutil.copy(shared_data / sorted(golden)[0], page)
    (page.parent / "mets.xml").write_text("<mets/>")  # not a page image
    assert G.page_files(tmp_path) == ["pages/ocrd/new_book/INPUT_0001.jpg"]
    gaps = G.coverage(golden, [*G.page_files(shared_data), *G.page_files(tmp_path)])
    assert gaps[0] == "1 page files not in the snapshot: pages/ocrd/new_book/INPUT_0001.jpg"
    assert "python -m bench.figure_golden --write" in gaps[-1]
