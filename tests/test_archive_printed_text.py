"""printed_text, --ocr and --captioner on real chapbook pages, through the real pipeline.

The text-layer PDFs are built from the shared ``lines.csv`` as OCRmyPDF writes one:
the scan, with every printed line in invisible text (render mode 3) over its box,
so the right title of every woodcut is known.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pymupdf
import pytest

import archive
from archive import captioner, ocr, printed_text, reader
from archive.apply import apply
from archive.boxes import iou
from archive.caption import make_caption
from archive.errors import ArchiveError
from ondemand import rss_mb
from tests.pdf_factory import (
    chapbook_boxes,
    chapbook_lines,
    chapbook_pages,
    scans_pdf,
    text_layer_pdf,
    turned_text_layer_pdf,
)
from tests.test_archive_pipeline import entries
from tests.tiny_models import build_captioner
from tests.zips import region_rows

ROOT = Path(__file__).resolve().parents[1]


def words(text: str) -> list[str]:
    return [w.strip(".,;:()").casefold() for w in text.split() if w.strip(".,;:()")]


def title_lines(shared: Path, page: Path) -> list[tuple[tuple[float, ...], list[str]]]:
    """Each annotated woodcut of ``page`` (fractions) and the words of its title line:
    the nearest line above or below that overlaps it, within 10% of the page height."""
    from PIL import Image

    w, h = Image.open(page).size
    out = []
    for x0, y0, x1, y1 in chapbook_boxes(shared)[page]:
        best = None
        for (lx0, ly0, lx1, ly1), text in chapbook_lines(shared)[page]:
            middle = (ly0 + ly1) / 2
            if min(x1, lx1) <= max(x0, lx0) or y0 < middle < y1 \
                    or printed_text.is_number_label(text):
                continue
            gap = max(0, ly0 - y1 if middle >= y1 else y0 - ly1)
            if gap <= 0.1 * h and (best is None or gap < best[0]):
                best = (gap, text)
        if best:
            out.append(((x0 / w, y0 / h, x1 / w, y1 / h), words(best[1])))
    return out


@pytest.fixture(scope="module")
def chapbooks(shared_data) -> list[Path]:
    return chapbook_pages(shared_data)[:10]


@pytest.fixture(scope="module")
def layer_zip(shared_data, chapbooks, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("layer")
    pdf = text_layer_pdf(tmp / "chapbooks.pdf", chapbooks, chapbook_lines(shared_data))
    out = tmp / "chapbooks.zip"
    archive.build_dataset([pdf], out, trigger="imperial", size=256)
    return out


def test_text_layer_gives_each_woodcut_its_title(shared_data, chapbooks, layer_zip):
    rows = [r for r in region_rows(layer_zip) if r["file_name"]]
    checked = held = 0
    for n, page in enumerate(chapbooks, 1):
        for box, title in title_lines(shared_data, page):
            crops = [r for r in rows if int(r["page"]) == n
                     and iou(box, tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))) >= 0.5]
            if not crops:
                continue  # the finder's miss, not the text rule's
            got = words(crops[0]["printed_text"])
            checked += 1
            held += sum(w in got for w in title) >= 0.8 * len(title)
    assert checked >= 12
    assert held >= 0.9 * checked, f"{held} of {checked} woodcuts got their title"


def test_a_page_printed_across_the_book_gives_its_woodcuts_their_titles(
        shared_data, chapbooks, layer_zip, tmp_path):
    """The same chapbook pages printed across the book (turned a quarter, their top at
    the left) with their text layer: each woodcut's title runs down the scan beside it,
    and the page is read turned upright, its words too. The crops stand upright and get
    the titles they get on the upright pages."""
    pdf = turned_text_layer_pdf(tmp_path / "turned.pdf", chapbooks, chapbook_lines(shared_data))
    archive.build_dataset([pdf], tmp_path / "turned.zip", trigger="imperial", size=256)
    turned = [r for r in region_rows(tmp_path / "turned.zip") if r["kept"] == "1"]
    upright = [r for r in region_rows(layer_zip) if r["kept"] == "1"]
    assert turned and {r["turned"] for r in turned} == {"90"}
    checked = held = 0
    for n in range(1, len(chapbooks) + 1):
        titles = [words(r["printed_text"]) for r in upright if int(r["page"]) == n]
        got = {w for r in turned if int(r["page"]) == n for w in words(r["printed_text"])}
        for title in (t for t in titles if t):
            checked += 1
            held += sum(w in got for w in title) >= 0.8 * len(title)
    assert checked >= 10
    assert held >= 0.9 * checked, f"{held} of {checked} titles read on the turned pages"


def test_metadata_rows_carry_printed_text_and_the_default_caption(layer_zip):
    with zipfile.ZipFile(layer_zip) as zf:
        rows = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
        captions = {r["file_name"]: zf.read(r["file_name"][:-4] + ".txt").decode()
                    for r in rows}
    assert rows and all("printed_text" in r and "model_caption" in r for r in rows)
    with_text = [r for r in rows if r["printed_text"]]
    assert len(with_text) >= 0.8 * len(rows)
    for r in rows:
        want = (f"imperial, {r['printed_text']}" if r["printed_text"]
                else f"imperial, an engraving from chapbooks, page {r['page']}")
        assert r["text"] == want == captions[r["file_name"]]
    assert any(r["printed_text"] == "EL VALIENTE" for r in rows)


def test_page_without_text_layer_gives_empty_printed_text(chapbooks, tmp_path):
    pdf = scans_pdf(tmp_path / "scans.pdf", chapbooks[:3])
    archive.build_dataset([pdf], tmp_path / "scans.zip", size=128)
    rows = [r for r in region_rows(tmp_path / "scans.zip") if r["file_name"]]
    assert rows and all(r["printed_text"] == "" for r in rows)
    with zipfile.ZipFile(tmp_path / "scans.zip") as zf:
        meta = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
    assert all(m["printed_text"] == "" and m["text"].startswith("an engraving from scans, page")
               for m in meta)


def test_printed_field_in_a_template(shared_data, chapbooks, tmp_path):
    pdf = text_layer_pdf(tmp_path / "t.pdf", chapbooks[5:7], chapbook_lines(shared_data),
                         as_form=False)  # the text drawn on the page itself, over the scan
    out = tmp_path / "t.zip"
    archive.build_dataset([pdf], out, size=128, caption="a woodcut: {printed} ({source} p{page})")
    with zipfile.ZipFile(out) as zf:
        meta = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
    assert meta and all(m["text"] == f"a woodcut: {m['printed_text']} (t p{m['page']})"
                        for m in meta if m["printed_text"])
    with pytest.raises(ArchiveError, match="not allowed"):
        archive.build_dataset([pdf], tmp_path / "bad.zip", caption="{printed.__class__}")


def test_default_caption_with_and_without_printed_text():
    assert make_caption("an engraving from {source}, page {page}", "mag", 3, "imperial",
                        "Fig. 41. Wassermühle") == "imperial, Fig. 41. Wassermühle"
    assert make_caption("an engraving from {source}, page {page}", "mag", 3, "imperial") \
        == "imperial, an engraving from mag, page 3"
    assert make_caption("an engraving from {source}, page {page}", "mag", 3, None,
                        "EL RATON") == "EL RATON"
    assert make_caption("an engraving from {source}, page {page}", "mag", 3, "imperial",
                        "EL RATON", "a mouse") == "imperial, a mouse, EL RATON"
    assert make_caption("{trigger}, {printed}, page {page}", "mag", 3, "imperial") \
        == "imperial, page 3"  # an empty field leaves no empty tag


def test_rule_never_takes_a_far_column_or_text_inside_the_picture():
    W = printed_text.Word
    box = (100, 100, 300, 400)
    page = [
        W(120, 420, 200, 440, "EL"), W(210, 420, 280, 440, "RATON"),  # the caption
        W(500, 420, 600, 440, "column"), W(610, 420, 700, 440, "beside"),  # far column
        W(150, 200, 250, 220, "hatching"),  # OCR noise inside the picture
        W(120, 60, 200, 80, "Núm."), W(210, 60, 240, 80, "23"),  # a number above
        W(120, 700, 250, 720, "far"), W(260, 700, 300, 720, "below"),  # too far down
    ]
    assert printed_text.printed_texts([box], page) == ["EL RATON"]
    assert printed_text.printed_texts([box], []) == [""]


def test_words_of_a_rotated_page_are_where_the_page_shows_them(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=600, height=800)
    page.insert_text((60, 100), "TITLE", fontsize=20, render_mode=3)
    upright = printed_text.text_layer_words(page)[0]
    page.set_rotation(90)  # a quarter turn clockwise, as a viewer shows it
    turned = printed_text.text_layer_words(page)[0]
    assert turned.x0 == pytest.approx(1 - upright.y1) and turned.y0 == pytest.approx(upright.x0)
    assert turned.x1 == pytest.approx(1 - upright.y0) and turned.y1 == pytest.approx(upright.x1)


def test_text_layer_scan_keeps_the_jpeg_fast_path(shared_data, chapbooks, tmp_path):
    lines = chapbook_lines(shared_data)
    for as_form in (True, False):
        pdf = text_layer_pdf(tmp_path / f"f{as_form}.pdf", chapbooks[:1], lines, as_form=as_form)
        doc = reader.open_pdf(pdf)
        assert reader.read_page(doc, 0).jpeg is not None  # decoded from its own bytes
        doc.close()
    doc = pymupdf.open(pdf)
    doc[0].insert_text((40, 40), "visible ink", fontsize=12)  # paints: must be rendered
    doc.save(tmp_path / "visible.pdf")
    doc.close()
    doc = reader.open_pdf(tmp_path / "visible.pdf")
    assert reader.read_page(doc, 0).jpeg is None
    doc.close()


def test_workers_and_resume_keep_the_bytes_with_printed_text(shared_data, chapbooks, tmp_path):
    pdf = text_layer_pdf(tmp_path / "c.pdf", chapbooks[:9], chapbook_lines(shared_data))
    opts = dict(size=96, trigger="imperial")
    archive.build_dataset([pdf], tmp_path / "one.zip", **opts)
    archive.build_dataset([pdf], tmp_path / "two.zip", workers=2, **opts)

    def stop(event):
        if event.done == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        archive.build_dataset([pdf], tmp_path / "resumed.zip", progress=stop, **opts)
    archive.build_dataset([pdf], tmp_path / "resumed.zip", resume=True, **opts)
    one, two, resumed = (entries(tmp_path / n) for n in ("one.zip", "two.zip", "resumed.zip"))
    assert list(one) == list(two) == list(resumed) and one == two == resumed
    assert any(r["printed_text"] for r in region_rows(tmp_path / "one.zip"))


def test_hugging_face_datasets_shows_printed_text(layer_zip, tmp_path):
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset("imagefolder", data_files=str(layer_zip), split="train",
                               cache_dir=str(tmp_path / "cache"))
    assert {"printed_text", "model_caption", "text"} <= set(ds.column_names)
    assert any(t for t in ds["printed_text"])


# --- --ocr ------------------------------------------------------------------------------


def test_ocr_without_tesseract_says_so_once_and_builds_the_zip(chapbooks, tmp_path):
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "tesserocr.py").write_text("raise ImportError('simulated: not installed')\n")
    pdf = scans_pdf(tmp_path / "s.pdf", chapbooks[:2])
    out = tmp_path / "s.zip"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shim), str(ROOT)]))
    run = subprocess.run([sys.executable, "-m", "archive", str(pdf), "-o", str(out), "--ocr",
                          "spa", "--size", "96"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("Tesseract is not installed") == 1, run.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.testzip() is None
        meta = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
    assert meta and all(m["printed_text"] == "" for m in meta)


def test_ocr_missing_language_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("TESSDATA_PREFIX", str(tmp_path))
    monkeypatch.setattr(ocr, "_DIRS", ())
    monkeypatch.setattr(ocr, "_engines", {})
    message = ocr.problem("xyz") or ""
    try:
        import tesserocr  # noqa: F401
    except ImportError:
        assert "not installed" in message
    else:
        assert "'xyz'" in message and "language data" in message


def test_ocr_reads_the_titles_of_image_only_scans(shared_data, chapbooks, tmp_path):
    if ocr.problem("spa"):
        if os.environ.get("CI"):  # .ci/run installs Tesseract: its absence there is a failure
            pytest.fail(ocr.problem("spa"))
        pytest.skip(ocr.problem("spa"))
    pages = chapbooks[6:9]  # EL VALIENTE, GRISELDA Y GUALTERO, LOS SIETE DOLORES
    pdf = scans_pdf(tmp_path / "s.pdf", pages)
    report = archive.build_dataset([pdf], tmp_path / "s.zip", size=96, ocr="spa")
    assert not report.notes
    rows = [r for r in region_rows(tmp_path / "s.zip") if r["kept"] == "1"]
    read = " ".join(r["printed_text"] for r in rows).casefold()
    assert "valiente" in read and "dolores" in read
    assert ocr.bands([(0.2, 0.3, 0.4, 0.5), (0.5, 0.32, 0.8, 0.5)]) == [
        (pytest.approx(0.2), pytest.approx(0.33)), (pytest.approx(0.49), pytest.approx(0.6))]


def test_ocr_reads_the_titles_of_pages_printed_across_the_book(chapbooks, tmp_path):
    """Image-only scans of pages printed across the book: OCR reads the bands round each
    woodcut on the page turned upright, where its title runs across."""
    if ocr.problem("spa"):
        if os.environ.get("CI"):
            pytest.fail(ocr.problem("spa"))
        pytest.skip(ocr.problem("spa"))
    pdf = turned_text_layer_pdf(tmp_path / "s.pdf", chapbooks[6:9], {})  # no text layer
    archive.build_dataset([pdf], tmp_path / "s.zip", size=96, ocr="spa")
    rows = [r for r in region_rows(tmp_path / "s.zip") if r["kept"] == "1"]
    assert rows and {r["turned"] for r in rows} == {"90"}
    read = " ".join(r["printed_text"] for r in rows).casefold()
    assert "valiente" in read and "dolores" in read


# --- --captioner ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_captioner_dir(tmp_path_factory) -> Path:
    # Big enough (about 50 MB of weights) that a model left in memory shows in the RSS.
    from archive.tiny_captioner import build_tiny_captioner

    return build_tiny_captioner(tmp_path_factory.mktemp("tiny-captioner"), hidden=128,
                                extra_words=100_000)


def test_captioner_writes_captions_and_releases_the_model(layer_zip, tiny_captioner_dir,
                                                          tmp_path):
    import torch  # noqa: F401 - loaded before the baseline, as the app has it loaded

    out = tmp_path / "captioned.zip"
    out.write_bytes(layer_zip.read_bytes())
    captioner.caption_dataset(out, str(build_captioner(tmp_path / "warm", 10)))  # warm imports
    before = rss_mb()
    peak = [before]
    report = captioner.caption_dataset(out, str(tiny_captioner_dir), batch=4,
                                       progress=lambda n: peak.append(rss_mb()))
    after = rss_mb()
    assert report.error is None and report.captioned > 0 and report.device == "cpu"
    assert max(peak) - before > 30  # the model really was in memory during the job
    assert after <= 1.05 * before, f"RSS {before:.0f} -> {after:.0f} MB after the job"
    with zipfile.ZipFile(out) as zf:
        meta = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
        assert json.loads(zf.read("build.json"))["captioner"] == str(tiny_captioner_dir)
        for m in meta:
            assert m["model_caption"]
            tail = f", {m['printed_text']}" if m["printed_text"] else ""
            assert m["text"] == f"imperial, {m['model_caption']}{tail}"
            assert zf.read(m["file_name"][:-4] + ".txt").decode() == m["text"]
    # the curated zip keeps them: apply replays from regions.csv and the .txt captions
    curated = apply(out, {}, tmp_path / "curated.zip")[0]
    with zipfile.ZipFile(curated) as zf:
        again = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
    assert again == meta


def test_failing_captioner_leaves_the_zip_as_built(layer_zip, tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "blip"}')  # no weights, no processor
    out = tmp_path / "c.zip"
    out.write_bytes(layer_zip.read_bytes())
    report = captioner.caption_dataset(out, str(broken))
    assert report.error and "keeps its printed and template captions" in report.error
    assert out.read_bytes() == layer_zip.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken-model", "c.zip"]


def test_cli_captioner_failure_is_one_warning_and_a_complete_zip(chapbooks, shared_data,
                                                                 tmp_path):
    pdf = text_layer_pdf(tmp_path / "c.pdf", chapbooks[:2], chapbook_lines(shared_data))
    run = subprocess.run([sys.executable, "-m", "archive", str(pdf), "-o", str(tmp_path / "c.zip"),
                          "--size", "96", "--captioner", str(tmp_path / "no-such-model")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, HF_HUB_OFFLINE="1"))
    assert run.returncode == 0, run.stderr
    assert run.stderr.count("warning: captioner") == 1
    with zipfile.ZipFile(tmp_path / "c.zip") as zf:
        assert zf.testzip() is None and zf.read("metadata.jsonl")


def test_model_card_counts_printed_and_model_captions(layer_zip, tiny_captioner_dir, tmp_path):
    from lora.train_data import load_training_set
    from lora.train_outputs import caption_sources

    out = tmp_path / "captioned.zip"
    out.write_bytes(layer_zip.read_bytes())
    captioner.caption_dataset(out, str(tiny_captioner_dir))
    with zipfile.ZipFile(out) as zf:
        meta = [json.loads(line) for line in zf.read("metadata.jsonl").decode().splitlines()]
    data = load_training_set([str(layer_zip), str(out)], 256)
    printed = sum(bool(m["printed_text"]) for m in meta)
    assert f"{2 * printed} of {2 * len(meta)} images carry the title" in caption_sources(data)
    assert f"{len(meta)} a captioning model's description" in caption_sources(data)
