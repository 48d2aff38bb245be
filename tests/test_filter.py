"""Page filter on real scans from ../shared/data, plus synthetic and odd-input checks."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from archive import filter as pf
from bench.fit_filter import load_page, synthetic_engraving, synthetic_text

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BORDE_SHARED_DATA", ROOT.parent / "shared" / "data"))
LABELS = DATA / "pages" / "labels.csv"
needs_data = pytest.mark.skipif(
    not LABELS.exists(), reason=f"real scans not found at {DATA} (set BORDE_SHARED_DATA)"
)


def _rows(pred) -> list[str]:
    with open(LABELS, encoding="utf-8") as fh:
        return [r["file"] for r in csv.DictReader(fh) if pred(r)]


@pytest.fixture(scope="module")
def default() -> pf.PageFilter:
    return pf.make_filter("layout")


def test_model_json_is_complete_and_documents_its_fit() -> None:
    model = json.loads(pf.MODEL_PATH.read_text(encoding="utf-8"))
    n = len(pf.FEATURE_NAMES)
    assert model["features"] == list(pf.FEATURE_NAMES)
    assert len(model["weights"]) == len(model["mean"]) == len(model["scale"]) == n
    assert 0.0 < model["threshold"] < 1.0
    fitted = model["fitted_with"]
    script = fitted["command"].split()[1]
    assert (ROOT / script).is_file()
    assert fitted["cv"]["overall"]["n_illustration"] > 50
    assert "moreno" in fitted["cv"] and "dta_text" in fitted["cv"]
    # ufal's licence allows test use only: measured as a held-out source, never fitted on
    assert "ufal" not in fitted["cv"] and fitted["held_out_ufal"]["n_illustration"] == 94


@needs_data
def test_default_keeps_chapbook_pages_with_woodcuts(default: pf.PageFilter) -> None:
    with open(DATA / "figures" / "moreno" / "regions.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    pictured = sorted({r["file"] for r in rows if r["kind"] != "none"})
    plain = sorted({r["file"] for r in rows if r["kind"] == "none"})[::2]
    kept = [default.judge(load_page(DATA / f)).kept for f in pictured]
    dropped = [not default.judge(load_page(DATA / f)).kept for f in plain]
    # in-sample for the shipped model; the grouped CV (0.95 / 0.98) is in filter_model.json
    assert len(pictured) == 39 and np.mean(kept) >= 0.9
    assert np.mean(dropped) >= 0.9


@needs_data
def test_default_drops_binarized_text_that_std_keeps(default: pf.PageFilter) -> None:
    std = pf.make_filter("std")
    pages = [load_page(DATA / f) for f in _rows(lambda r: "dta_text" in r["file"])[::4]]
    dropped = np.mean([not default.judge(p).kept for p in pages])
    std_kept = np.mean([std.judge(p).kept for p in pages])
    assert dropped >= 0.9
    assert std_kept >= 0.5  # the seed rule's documented failure: binarized text passes


def test_std_mode_is_the_seed_rule() -> None:
    flat = Image.new("L", (600, 900), 200)
    halves = np.zeros((900, 600), np.uint8)
    halves[:, 300:] = 255
    low, high = (
        pf.make_filter("std").judge(flat),
        pf.make_filter("std").judge(Image.fromarray(halves)),
    )
    assert not low.kept and low.reason.startswith("std 0.0 <=")
    assert high.kept and abs(high.score - 127.5) < 2  # std of a half-black page
    assert pf.make_filter("std", threshold=200).judge(Image.fromarray(halves)).kept is False


@needs_data
def test_scores_do_not_depend_on_input_resolution(default: pf.PageFilter) -> None:
    files = _rows(lambda r: r["category"] in ("DRAW", "TEXT_P", "body text (binarized)"))[::25]
    std = pf.make_filter("std")
    for f in files:
        big = load_page(DATA / f)
        small = big.resize((big.width * 400 // max(big.size), big.height * 400 // max(big.size)))
        large = big.resize((big.width * 1200 // max(big.size), big.height * 1200 // max(big.size)))
        assert abs(default.judge(small).score - default.judge(large).score) < 0.1, f
        assert abs(std.judge(small).score - std.judge(large).score) < 4, f


def test_synthetic_magazine_pages_are_separated() -> None:
    filt = pf.make_filter("layout")
    rng = np.random.default_rng(3)
    for _ in range(3):
        text = filt.judge(synthetic_text(rng).resize((600, 833)))
        art = filt.judge(synthetic_engraving(rng).resize((600, 833)))
        assert not text.kept and text.reason.startswith("text p=")
        assert art.kept and art.reason.startswith("illustration p=")


def test_min_figure_area_drops_a_vignette_but_keeps_a_plate() -> None:
    rng = np.random.default_rng(5)
    plate = synthetic_engraving(rng).resize((600, 833))
    page = Image.new("RGB", (600, 833), (235, 225, 195))
    page.paste(plate.resize((90, 70)), (255, 380))
    strict = pf.make_filter("layout", min_figure_area=0.05)
    vignette = strict.judge(page)
    assert not vignette.kept and vignette.reason.startswith("figure area 0.0")
    assert pf.make_filter("layout").judge(plate).kept and strict.judge(plate).kept


@pytest.mark.parametrize("name", pf.FILTER_NAMES)
def test_odd_inputs_always_get_a_verdict(name: str) -> None:
    rgb = Image.fromarray(np.random.default_rng(0).integers(0, 255, (300, 200, 3), np.uint8))
    pages = [
        Image.new("L", (600, 900), 255),
        Image.new("L", (600, 900), 0),
        Image.new("RGB", (10, 10), "white"),
        Image.new("L", (1, 1), 0),
        Image.new("L", (5000, 20), 128),
        Image.new("L", (7, 3000), 30),
        rgb.convert("RGBA"),
        rgb.convert("CMYK"),
        rgb.convert("1"),
        rgb.convert("P"),
        rgb.convert("LA"),
        Image.fromarray((np.arange(60000).reshape(300, 200) % 65535).astype(np.uint16)),
        rgb.convert("F"),
    ]
    filt = pf.make_filter(name)
    for page in pages:
        v = filt.judge(page)
        assert isinstance(v, pf.Verdict) and math.isfinite(v.score) and v.reason, page.mode
    if name in ("layout", "figures"):
        assert not filt.judge(pages[0]).kept  # a blank page is no illustration


def test_unknown_filter_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown filter"):
        pf.make_filter("median")
