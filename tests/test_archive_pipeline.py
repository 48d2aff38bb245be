from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

import archive
from archive.errors import ArchiveError
from archive.pipeline import parse_pages, source_names
from archive.resize import fit, paper_colour
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf, text_pdf


@pytest.fixture(scope="module")
def pages(shared_data):
    return labelled_pages(shared_data)


@pytest.fixture(scope="module")
def mixed_pdf(pages, shared_data, tmp_path_factory) -> Path:
    """Six real chapbook pages with woodcuts and six real binarized text pages, interleaved."""
    ill = chapbook_pages(shared_data)[:6]
    txt = [p for p, label in pages if "dta_text" in str(p)][:6]
    order = [x for pair in zip(ill, txt, strict=True) for x in pair]
    return scans_pdf(tmp_path_factory.mktemp("pdf") / "magazine 1890.pdf", order)


def entries(zip_path: Path) -> dict[str, object]:
    """Names and CRCs; the manifest's ``ms`` column is wall time, so it is compared without it."""
    with zipfile.ZipFile(zip_path) as zf:
        out: dict[str, object] = {i.filename: i.CRC for i in zf.infolist()}
        rows = csv.reader(io.StringIO(zf.read("manifest.csv").decode()))
        out["manifest.csv"] = [row[:-1] for row in rows]
    return out


def test_page_mode_builds_the_documented_zip(mixed_pdf, tmp_path):
    out = tmp_path / "ds.zip"
    events = []
    report = archive.build_dataset(
        [mixed_pdf], out, unit="page", size=128, progress=events.append, trigger="imperial"
    )
    assert out.exists() and not (tmp_path / "ds.zip.partial").exists()
    assert report.pages == 12 and len(events) == 12
    assert [e.done for e in events] == list(range(1, 13))
    with zipfile.ZipFile(out) as zf:
        names = zf.namelist()
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())
        assert not any(n.startswith("_journal") for n in names)
        manifest = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
        meta = [json.loads(x) for x in zf.read("metadata.jsonl").decode().splitlines()]
        assert list(manifest[0]) == [
            "source", "page", "kept", "figures", "score", "reason", "width", "height",
            "page_bbox", "ms",
        ]
        for row in manifest:  # the page inside the scan, fractions of the displayed page
            x0, y0, x1, y1 = (float(v) for v in row["page_bbox"].split())
            assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
        regions = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
        assert len(regions) == 12 and all(r["x1"] == r["y1"] == "1.0000" for r in regions)
        assert [int(r["page"]) for r in manifest] == list(range(1, 13))
        kept = [r for r in manifest if r["kept"] == "1"]
        assert len(meta) == len(kept) == report.kept
        for row in meta:
            assert row["file_name"] in names
            img = Image.open(io.BytesIO(zf.read(row["file_name"])))
            assert img.size == (128, 128) and img.format == "JPEG"
            caption = zf.read(row["file_name"].replace(".jpg", ".txt")).decode()
            assert (
                caption
                == row["text"]
                == f"imperial, an engraving from magazine_1890, page {row['page']}"
            )
            assert set(row) >= {"file_name", "text", "source", "page", "score", "bbox", "kind"}
            assert row["bbox"] == [0, 0, 1, 1] and row["kind"] == "page"
    assert meta[0]["file_name"].startswith("images/magazine_1890_p000")


def test_default_filter_separates_real_engravings_from_binarized_text(mixed_pdf, tmp_path):
    report = archive.build_dataset([mixed_pdf], tmp_path / "ds.zip", unit="page", size=64)
    with zipfile.ZipFile(tmp_path / "ds.zip") as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
    odd = [r["kept"] for r in rows if int(r["page"]) % 2 == 1]  # drawings
    even = [r["kept"] for r in rows if int(r["page"]) % 2 == 0]  # DTA text
    assert odd.count("1") >= 5, rows
    assert even.count("0") >= 5, rows
    assert report.kept == odd.count("1") + even.count("1")


def test_seed_std_filter_keeps_binarized_text(mixed_pdf, tmp_path):
    """The documented failure of the seed rule, kept available as --filter std."""
    archive.build_dataset([mixed_pdf], tmp_path / "ds.zip", unit="page", filter="std", size=64)
    with zipfile.ZipFile(tmp_path / "ds.zip") as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
    text_kept = [r for r in rows if int(r["page"]) % 2 == 0 and r["kept"] == "1"]
    assert len(text_kept) >= 3
    assert all(r["reason"].startswith("std") for r in rows)


def test_interrupted_run_resumes_to_the_same_zip(mixed_pdf, tmp_path):
    full = tmp_path / "full.zip"
    page_mode = dict(unit="page", size=96, filter="std", threshold=0)
    archive.build_dataset([mixed_pdf], full, **page_mode)

    out = tmp_path / "resumed.zip"

    def stop_after_7(event):
        if event.done == 7:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        archive.build_dataset([mixed_pdf], out, progress=stop_after_7, **page_mode)
    assert not out.exists() and (tmp_path / "resumed.zip.partial").exists()
    with pytest.raises(ArchiveError, match="--resume"):
        archive.build_dataset([mixed_pdf], out, **page_mode)
    report = archive.build_dataset([mixed_pdf], out, resume=True, **page_mode)
    assert report.resumed == 7 and report.pages == 12
    assert entries(out) == entries(full)


def test_workers_keep_the_order_and_the_bytes(mixed_pdf, tmp_path):
    one = tmp_path / "one.zip"
    two = tmp_path / "two.zip"
    archive.build_dataset([mixed_pdf], one, size=64)
    archive.build_dataset([mixed_pdf], two, size=64, workers=2)
    assert list(entries(one)) == list(entries(two))
    assert entries(one) == entries(two)


def test_render_path_and_page_selection(tmp_path, shared_data):
    born_digital = text_pdf(tmp_path / "text.pdf", pages=3)
    scan = shared_data / "pdfs" / "lichtenstein.pdf"
    report = archive.build_dataset(
        [born_digital, scan], tmp_path / "ds.zip", unit="page", size=64, pages="2-",
        filter="std", threshold=0,
    )
    with zipfile.ZipFile(tmp_path / "ds.zip") as zf:
        rows = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
    assert [(r["source"], r["page"]) for r in rows] == [("text", "2"), ("text", "3")]
    assert report.pages == 2


def test_rotated_scan_page_comes_out_upright(pages, tmp_path):
    portrait = next(p for p, label in pages if "/DRAW/atrium-34" in str(p))
    pdf = scans_pdf(tmp_path / "rot.pdf", [portrait], rotate=90)
    archive.build_dataset(
        [pdf], tmp_path / "ds.zip", unit="page", size=64, resize="stretch", filter="std",
        threshold=0,
    )
    doc = pymupdf.open(pdf)
    pix = doc[0].get_pixmap(matrix=pymupdf.Matrix(0.2, 0.2))
    viewer = Image.frombytes("RGB", (pix.width, pix.height), pix.samples).resize((64, 64))
    with zipfile.ZipFile(tmp_path / "ds.zip") as zf:
        ours = Image.open(io.BytesIO(zf.read("images/rot_p00001.jpg"))).convert("RGB")
        rows = list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))
    assert int(rows[0]["width"]) > int(rows[0]["height"])  # landscape once rotated
    diff = sum(abs(a - b) for a, b in zip(ours.tobytes(), viewer.tobytes(), strict=True))
    assert diff / (64 * 64 * 3) < 25, "the page must look as a PDF viewer shows it"


def test_pad_uses_the_paper_colour():
    page = Image.new("RGB", (300, 600), (236, 226, 196))
    page.paste((20, 20, 20), (100, 100, 200, 500))
    assert paper_colour(page) == (236, 226, 196)
    out = fit(page, 128, "pad")
    assert out.size == (128, 128) and out.getpixel((2, 64)) == (236, 226, 196)
    assert fit(page, 128, "crop").getpixel((64, 64)) == (20, 20, 20)


def test_page_ranges_and_safe_names():
    assert parse_pages("1-3,5,9-", 10) == [0, 1, 2, 4, 8, 9]
    with pytest.raises(ArchiveError):
        parse_pages("x-2", 10)
    names = source_names(
        [
            Path("../../x.pdf"),
            Path("a\nb.pdf"),
            Path("Ärger é.pdf"),
            Path("x" * 300 + ".pdf"),
            Path("x.pdf"),
        ]
    )
    assert names[0] == "x" and names[4] == "x_2"
    assert all("/" not in n and "\n" not in n and len(n) <= 80 for n in names)


def test_hugging_face_datasets_reads_the_zip(mixed_pdf, tmp_path):
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "ds.zip"
    report = archive.build_dataset([mixed_pdf], out, size=256)
    ds = datasets.load_dataset(
        "imagefolder", data_files=str(out), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert ds.num_rows == report.items > 0
    assert ds[0]["text"].startswith("an engraving from magazine_1890, page ")
    assert set(ds.column_names) >= {"image", "text", "source", "page", "score", "bbox", "kind"}
    assert all(w % 64 == 0 and h % 64 == 0 for w, h in (im.size for im in ds["image"]))


def test_kept_scan_is_decoded_no_larger_than_its_resize_mode_needs(pages, tmp_path):
    """A 300-dpi scan padded to 1024 px is decoded at 3/8, cropped at 1/2; never below need."""
    from archive import reader
    from archive.resize import needed_size

    assert needed_size(2550, 3300, 1024, "pad") == (792, 1024)
    assert needed_size(2550, 3300, 1024, "crop") == (1024, 1326)
    assert needed_size(2550, 3300, 1024, "stretch") == (1024, 1326)
    assert needed_size(500, 600, 1024, "pad") == (500, 600)  # never upscaled
    big = next(p for p, label in pages if label == "illustration" and "/DRAW/" in str(p))
    scan = Image.open(big).convert("RGB").resize((2550, 3300))
    scan.save(tmp_path / "scan.jpg", quality=85)
    pdf = scans_pdf(tmp_path / "scan.pdf", [tmp_path / "scan.jpg"], dpi=300)
    doc = reader.open_pdf(pdf)
    page = reader.read_page(doc, 0)
    assert page.jpeg is not None and (page.width, page.height) == (2550, 3300)
    for mode, expect in (("pad", (957, 1238)), ("crop", (1275, 1650))):
        need = needed_size(page.width, page.height, 1024, mode)
        img = page.full(need)
        assert img.size == expect and img.width >= need[0] and img.height >= need[1]
    # TurboJPEG's 1/8 preview is the same pixels as PIL's draft
    pil = Image.open(io.BytesIO(page.jpeg))
    pil.draft("RGB", reader.draft_size(pil.width, pil.height))
    assert page.preview.tobytes() == pil.convert("RGB").tobytes()


def test_the_decoded_array_is_the_decoded_image_at_every_rotation(pages, tmp_path):
    """The crops are cut from ``full_array``: the same pixels as ``full``, turned as shown."""
    import numpy as np

    from archive import reader

    portrait = next(p for p, label in pages if "/DRAW/atrium-34" in str(p))
    for turn in (0, 90, 180, 270):
        doc = reader.open_pdf(scans_pdf(tmp_path / f"r{turn}.pdf", [portrait], rotate=turn))
        page = reader.read_page(doc, 0)
        assert page.jpeg is not None and page.image_only
        for need in (None, (page.width // 3, page.height // 3)):
            assert np.array_equal(page.full_array(need), np.asarray(page.full(need)))
        doc.close()


def test_perceptual_hash_is_imagehash_phash(pages):
    """Our pHash (a matrix DCT, no scipy import) gives imagehash.phash's bits."""
    import imagehash

    from archive.dedup import perceptual_hash

    crops = 0
    for path, _label in pages[::7]:
        img = Image.open(path).convert("RGB")
        img.thumbnail((250, 250))  # under 2 x _HASH_SIDE: hashed as it is
        w, h = img.size
        for box in ((0, 0, w, h), (w // 5, h // 7, w * 3 // 4, h // 2)):
            crop = img.crop(box)
            assert perceptual_hash(crop) == str(imagehash.phash(crop.convert("L")))
            crops += 1
    assert crops >= 20


def _jpeg_segments(data: bytes) -> dict[int, list[bytes]]:
    """Each marker's segments up to the scan (tables, frame header)."""
    out: dict[int, list[bytes]] = {}
    i = 2
    while data[i + 1] != 0xDA:
        n = int.from_bytes(data[i + 2 : i + 4], "big")
        out.setdefault(data[i + 1], []).append(data[i + 4 : i + 2 + n])
        i += 2 + n
    return out


def test_a_crop_is_encoded_as_pil_would_and_always_the_same(shared_data):
    """The array path (TurboJPEG) writes PIL's quantisation, frame and 4:2:0 sampling,
    the same bytes each time, and loses no more than PIL does."""
    from archive.resize import encode_jpeg, fit_array

    for path in chapbook_pages(shared_data)[:3]:
        crop = fit_array(np.asarray(Image.open(path).convert("RGB")), 1024, "bucket")
        ours = encode_jpeg(crop, 92)
        pil = encode_jpeg(Image.fromarray(np.ascontiguousarray(crop)), 92)
        assert ours == encode_jpeg(crop.copy(), 92)
        mine, theirs = _jpeg_segments(ours), _jpeg_segments(pil)
        assert mine[0xDB] == theirs[0xDB] and mine[0xC0] == theirs[0xC0]
        back = [np.asarray(Image.open(io.BytesIO(b)).convert("RGB"), np.float64)
                for b in (ours, pil)]
        psnr = [10 * np.log10(255**2 / np.mean((b - crop) ** 2)) for b in back]
        assert psnr[0] > 38 and psnr[0] > psnr[1] - 0.5, psnr
