"""Figure mode through the whole pipeline: crops, boxes, buckets, duplicates, decoding."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image

import archive
from archive import reader
from archive.boxes import iou
from tests.pdf_factory import figure_page, labelled_pages, scans_pdf, woodcut


def read_zip(path: Path) -> tuple[list[dict], list[dict], list[dict], zipfile.ZipFile]:
    zf = zipfile.ZipFile(path)
    meta = [json.loads(x) for x in zf.read("metadata.jsonl").decode().splitlines()]
    manifest = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
    regions = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
    return meta, manifest, regions, zf


@pytest.fixture(scope="module")
def two_figures(shared_data, tmp_path_factory) -> tuple[Path, list[tuple[float, ...]]]:
    folder = tmp_path_factory.mktemp("two")
    boxes = figure_page(folder / "two.jpg", [woodcut(shared_data, 1), woodcut(shared_data, 2)])
    return folder / "two.jpg", boxes


def test_two_figures_give_two_items_with_their_boxes(two_figures, tmp_path):
    jpg, truth = two_figures
    pdf = scans_pdf(tmp_path / "Two Woodcuts.pdf", [jpg])
    report = archive.build_dataset([pdf], tmp_path / "ds.zip", size=256)
    meta, manifest, regions, zf = read_zip(tmp_path / "ds.zip")
    assert report.items == 2 and report.kept == 1
    assert [m["file_name"] for m in meta] == [
        "images/Two_Woodcuts_p00001_f1.jpg", "images/Two_Woodcuts_p00001_f2.jpg"
    ]
    for m, box in zip(meta, truth, strict=True):
        assert iou(m["bbox"], box) >= 0.8, (m["bbox"], box)
        assert m["page"] == 1 and m["source"] == "Two_Woodcuts" and m["kind"] in (
            "engraving", "photo")
        assert zf.read(m["file_name"].replace(".jpg", ".txt")).decode() == m["text"]
    assert manifest[0]["figures"] == "2" and manifest[0]["kept"] == "1"
    kept_rows = [r for r in regions if r["kept"] == "1"]
    assert [r["file_name"] for r in kept_rows] == [m["file_name"] for m in meta]


def test_boxes_are_fractions_of_the_displayed_page(two_figures, tmp_path):
    """A page with /Rotate 90 is shown turned clockwise; its boxes turn with it."""
    jpg, truth = two_figures
    pdf = scans_pdf(tmp_path / "rot.pdf", [jpg], rotate=90)
    archive.build_dataset([pdf], tmp_path / "ds.zip", size=256)
    meta, manifest, _, _ = read_zip(tmp_path / "ds.zip")
    assert int(manifest[0]["width"]) > int(manifest[0]["height"])
    turned = sorted((1 - y1, x0, 1 - y0, x1) for x0, y0, x1, y1 in truth)
    found = sorted(tuple(m["bbox"]) for m in meta)
    assert len(found) == 2
    for got, want in zip(found, turned, strict=True):
        assert iou(got, want) >= 0.8, (got, want)


def test_bucket_sizes_keep_the_shape(two_figures, tmp_path):
    jpg, _ = two_figures
    pdf = scans_pdf(tmp_path / "b.pdf", [jpg])
    archive.build_dataset([pdf], tmp_path / "ds.zip", size=512)
    meta, _, _, zf = read_zip(tmp_path / "ds.zip")
    for m in meta:
        w, h = Image.open(io.BytesIO(zf.read(m["file_name"]))).size
        x0, y0, x1, y1 = m["bbox"]
        crop_ratio = (x1 - x0) * 1200 / ((y1 - y0) * 1700)
        assert w % 64 == 0 and h % 64 == 0
        assert abs(w * h / 512**2 - 1) <= 0.10
        assert abs(w / h / crop_ratio - 1) < 0.1, (w, h, crop_ratio)


def test_a_repeated_page_gives_one_item_unless_duplicates_are_kept(two_figures, tmp_path):
    jpg, _ = two_figures
    pdf = scans_pdf(tmp_path / "rep.pdf", [jpg, jpg])
    archive.build_dataset([pdf], tmp_path / "a.zip", size=128)
    meta, manifest, regions, _ = read_zip(tmp_path / "a.zip")
    assert [m["page"] for m in meta] == [1, 1]
    dups = [r for r in regions if r["page"] == "2" and r["kept"] == "0"]
    assert [r["reason"] for r in dups] == [
        "duplicate of images/rep_p00001_f1.jpg", "duplicate of images/rep_p00001_f2.jpg"
    ]
    assert manifest[1]["kept"] == "0" and manifest[1]["reason"] == "duplicate"
    again = archive.build_dataset([pdf], tmp_path / "b.zip", size=128, keep_duplicates=True)
    assert again.items == 4 and again.duplicates == 0


def test_duplicates_are_found_across_pdfs(two_figures, tmp_path):
    jpg, _ = two_figures
    first = scans_pdf(tmp_path / "vol1.pdf", [jpg])
    second = scans_pdf(tmp_path / "vol2.pdf", [jpg], dpi=200)
    report = archive.build_dataset([first, second], tmp_path / "ds.zip", size=128)
    meta, _, _, _ = read_zip(tmp_path / "ds.zip")
    assert report.duplicates == 2 and {m["source"] for m in meta} == {"vol1"}


def test_a_page_without_figures_is_decoded_only_for_its_preview(
    shared_data, two_figures, tmp_path, monkeypatch
):
    text = [p for p, _ in labelled_pages(shared_data) if "dta_text" in str(p)][:3]
    pdf = scans_pdf(tmp_path / "mix.pdf", [*text, two_figures[0]])
    decoded: list[int] = []

    def counting(decode):
        def counted(self, need=None, *boxes):
            decoded.append(self.number)
            return decode(self, need, *boxes)
        return counted

    for name in ("full", "full_array"):  # the crops are cut from full_array's pixels
        monkeypatch.setattr(reader.Page, name, counting(getattr(reader.Page, name)))
    report = archive.build_dataset([pdf], tmp_path / "ds.zip", size=128)
    assert decoded == [4] and report.items == 2


def test_scan_only_lists_every_candidate(two_figures, tmp_path):
    jpg, _ = two_figures
    pdf = scans_pdf(tmp_path / "s.pdf", [jpg, jpg])
    report = archive.build_dataset([pdf], tmp_path / "scan.csv", scan_only=True)
    text = (tmp_path / "scan.regions.csv").read_text(encoding="utf-8")
    regions = list(csv.DictReader(io.StringIO(text)))
    assert report.items == 4  # nothing is decoded, so nothing is hashed or de-duplicated
    assert [r["page"] for r in regions if r["kept"] == "1"] == ["1", "1", "2", "2"]
    assert list(regions[0]) == [
        "source", "page", "index", "x0", "y0", "x1", "y1", "score", "kind", "kept", "reason",
        "decision", "file_name", "phash", "finder_reason", "printed_text", "model_caption",
        "turned", "origin",
    ]
    assert not (tmp_path / "scan.zip").exists()


def test_threshold_keeps_every_candidate_scoring_at_least_it(shared_data, tmp_path):
    from tests.pdf_factory import chapbook_pages

    pdf = scans_pdf(tmp_path / "c.pdf", chapbook_pages(shared_data)[:6])
    scan = archive.build_dataset([pdf], tmp_path / "scan.csv", scan_only=True)
    text = (tmp_path / "scan.regions.csv").read_text(encoding="utf-8")
    scores = [float(r["score"]) for r in csv.DictReader(io.StringIO(text))]
    for cut in (0.25, 0.95):
        report = archive.build_dataset([pdf], tmp_path / f"t{cut}.csv", scan_only=True,
                                       threshold=cut)
        assert report.items == sum(s >= cut for s in scores), cut
    assert scan.items == sum(s >= 0.5 for s in scores)  # the finder's own verdicts
