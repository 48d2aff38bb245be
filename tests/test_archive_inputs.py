"""Hostile and odd inputs to the archive: bombs, huge pages, server paths, page caps."""

from __future__ import annotations

import csv
import io
import os
import re
import time
import zipfile
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

import archive
import ui_text
from archive import reader, serverpath
from archive.errors import CODES, CRASH_CODES, ArchiveError
from archive.ui import ERROR_KEYS, error_said, run_job
from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf
from ui_text import say, sayer, words

ROOT = Path(__file__).resolve().parents[1]


def _jpeg(size=(64, 80), colour=(120, 90, 60)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, colour).save(buf, format="JPEG")
    return buf.getvalue()


def _claim_size(jpeg: bytes, w: int, h: int) -> bytes:
    """Rewrite the SOF0 header so the JPEG claims w x h pixels."""
    i = jpeg.index(b"\xff\xc0")
    return jpeg[: i + 5] + h.to_bytes(2, "big") + w.to_bytes(2, "big") + jpeg[i + 9 :]


def _one_image_pdf(out: Path, data: bytes, width: int, height: int, media=(612, 792)) -> Path:
    """A hand-written PDF whose page is one DCT image with the given /Width /Height."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {media[0]} {media[1]}] "
        f"/Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R >>".encode(),
    ]
    content = f"q {media[0]} 0 0 {media[1]} 0 0 cm /Im0 Do Q".encode()
    objs.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    objs.append(
        f"<< /Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace "
        f"/DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length {len(data)} >>\nstream\n"
        .encode() + data + b"\nendstream"
    )
    body, offsets = b"%PDF-1.7\n", []
    for n, o in enumerate(objs, 1):
        offsets.append(len(body))
        body += f"{n} 0 obj\n".encode() + o + b"\nendobj\n"
    xref = len(body)
    body += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    body += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    body += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    out.write_bytes(body)
    return out


def _manifest(zip_path: Path) -> list[dict]:
    with zipfile.ZipFile(zip_path) as zf:
        return list(csv.DictReader(io.StringIO(zf.read("manifest.csv").decode())))


def test_image_claiming_100k_by_100k_is_a_bad_page_not_a_crash(tmp_path):
    pdf = _one_image_pdf(tmp_path / "bomb.pdf", _jpeg(), 100_000, 100_000)
    report = archive.build_dataset([pdf], tmp_path / "o.zip", size=64)
    rows = _manifest(tmp_path / "o.zip")
    assert report.bad == 1 and rows[0]["kept"] == "0"
    assert "limit" in rows[0]["reason"] and "BORDE_MAX_PIXELS" in rows[0]["reason"]


def test_jpeg_header_bomb_is_refused_before_decoding(tmp_path):
    lying = _claim_size(_jpeg(), 60_000, 60_000)
    pdf = _one_image_pdf(tmp_path / "liar.pdf", lying, 64, 80)
    archive.build_dataset([pdf], tmp_path / "o.zip", size=64, unit="page", filter="std",
                          threshold=-1)
    row = _manifest(tmp_path / "o.zip")[0]
    assert row["kept"] == "0" and ("limit" in row["reason"] or "too large" in row["reason"])


def test_absurd_mediabox_renders_within_the_pixel_budget(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=14400, height=14400)  # the PDF maximum, 200 inches square
    page.draw_rect(pymupdf.Rect(1000, 1000, 13000, 13000), color=(0, 0, 0), fill=(0.3, 0.3, 0.3))
    doc.save(tmp_path / "huge.pdf")
    report = archive.build_dataset([tmp_path / "huge.pdf"], tmp_path / "o.zip", size=64,
                                   unit="page", filter="std", threshold=-1, scale=2.0)
    row = _manifest(tmp_path / "o.zip")[0]
    assert report.kept == 1
    assert int(row["width"]) * int(row["height"]) <= 150_000_000 * 1.01


def test_page_cap_names_the_limit(shared_data, tmp_path):
    pages = [p for p, _ in labelled_pages(shared_data)][:5]
    pdf = scans_pdf(tmp_path / "five.pdf", pages)
    with pytest.raises(ArchiveError, match="BORDE_MAX_PAGES"):
        archive.build_dataset([pdf], tmp_path / "o.zip", max_pages=4)
    assert not list(tmp_path.glob("o.zip*"))


def test_server_path_never_leaves_the_data_folder(tmp_path, shared_data, monkeypatch):
    root = tmp_path / "data"
    (root / "scans").mkdir(parents=True)
    real = shared_data / "pdfs" / "linn.pdf"
    (root / "scans" / "linn.pdf").write_bytes(real.read_bytes())
    os.symlink(real, root / "escape.pdf")
    os.symlink(shared_data / "pdfs", root / "linked-dir")
    (tmp_path / "secret.pdf").write_bytes(real.read_bytes())
    monkeypatch.setenv("BORDE_DATA_DIR", str(root))
    assert serverpath.list_pdfs() == ["scans/linn.pdf"]
    assert serverpath.resolve_choice("scans/linn.pdf") == (root / "scans" / "linn.pdf").resolve()
    for bad in ("../secret.pdf", str(tmp_path / "secret.pdf"), "escape.pdf",
                "linked-dir/linn.pdf", "scans/../../secret.pdf", "scans"):
        with pytest.raises(ArchiveError):
            serverpath.resolve_choice(bad)
    monkeypatch.setenv("BORDE_DATA_DIR", str(tmp_path / "absent"))
    assert serverpath.data_dir() is None and serverpath.list_pdfs() == []


def test_ui_job_streams_snapshots_and_ends_with_histogram(shared_data, tmp_path):
    pages = labelled_pages(shared_data)
    pick = chapbook_pages(shared_data)[:2] + [p for p, _ in pages if "dta" in str(p)][:2]
    pdf = scans_pdf(tmp_path / "job.pdf", pick)
    snaps = list(run_job([pdf], sayer("es"), work_dir=tmp_path, every=1, size=64))
    last = snaps[-1]
    assert last.error is None and last.zip_path and last.zip_path.exists()
    assert last.histogram is not None and last.histogram.size[0] > 200
    assert [s.done for s in snaps[:-1]] == sorted(s.done for s in snaps[:-1])
    assert len(last.gallery) == last.report.items > 0  # one crop per item, with its score
    # each thumbnail is a file written once: a crop keeps its file from snapshot to snapshot
    files: dict[str, set[str]] = {}
    for snap in snaps:
        for f, label in snap.gallery:
            files.setdefault(label, set()).add(f)
    assert all(len(f) == 1 for f in files.values()), files
    assert all(Path(f).is_file() for f, _ in last.gallery)
    assert Image.open(last.gallery[0][0]).size[0] > 16
    assert all(re.fullmatch(r"pág\. \d+ #\d+ · [01]\.\d\d", label) for _, label in last.gallery)
    # one progress line in words while it runs; the summary in words, no server path
    assert all(s.status.count("<progress") == 1 and "Página" in s.status
               for s in snaps[1:-1]) and "Abriendo el PDF" in snaps[0].status
    assert last.status.startswith("Hecho: 4 página(s) leídas") and str(tmp_path) not in last.status
    assert "RSS" not in last.status and " s (" in last.status


def test_ui_job_errors_are_sentences_without_server_paths(tmp_path):
    fake = tmp_path / "x.pdf"
    fake.write_text("hello")
    snaps = list(run_job([fake], sayer("en"), work_dir=tmp_path))
    assert snaps[-1].error.startswith("The build stopped: ") and "not a PDF" in snaps[-1].error
    assert ".partial" not in snaps[-1].error and "--resume" not in snaps[-1].error
    none = list(run_job([], sayer("en")))
    assert none[-1].error == ("Choose a PDF first: upload one above, or paste a IIIF "
                               "manifest's address.")
    picker = list(run_job([], sayer("es"), server_picker=True))
    assert "servidor" in picker[-1].error


def test_the_old_filter_name_default_still_means_the_default_filter():
    from archive.cli import parser
    from archive.pipeline import Options

    args = parser().parse_args(["a.pdf", "-o", "a.zip", "--filter", "default"])
    assert Options(filter=args.filter).check().filter == "figures"
    assert Options(filter="default", unit="page").check().filter == "figures"
    with pytest.raises(ArchiveError, match="--filter must be one of"):
        Options(filter="cnn").check()


def _scans_read(doc: pymupdf.Document) -> list[tuple[bytes | None, bytes]]:
    """Per page: the scan's bytes read straight from the file (None: not taken), and MuPDF's."""
    out = []
    for page in doc:
        xref = page.get_images(full=True)[0][0]
        out.append((reader._stored_stream(doc, xref), doc.xref_stream_raw(xref)))
    return out


def test_scan_bytes_read_from_the_file_are_mupdfs_raw_stream(shared_data, tmp_path):
    """The pread fast path gives MuPDF's bytes, whatever wrote the PDF: as scanned, saved
    with object streams, and after an incremental update that replaced a page's scan."""
    pages = chapbook_pages(shared_data)[:3]
    plain = scans_pdf(tmp_path / "plain.pdf", pages)
    with pymupdf.open(plain) as doc:
        doc.save(tmp_path / "objstm.pdf", garbage=4, deflate=True, use_objstms=1)
    updated, new_scan = tmp_path / "updated.pdf", _jpeg((120, 160), (30, 60, 90))
    updated.write_bytes(plain.read_bytes())
    with pymupdf.open(updated) as doc:
        doc.update_stream(doc[1].get_images()[0][0], new_scan, compress=False)
        doc.saveIncr()
    for pdf in (plain, tmp_path / "objstm.pdf", updated):
        with reader.open_pdf(pdf) as doc:
            read = _scans_read(doc)
            assert [fast for fast, _ in read] == [raw for _, raw in read], pdf.name
            if pdf == updated:
                assert read[1][1] == new_scan  # the update's scan, not the one it replaced
            first = reader.read_page(doc, 0)
            assert first.jpeg == read[0][1] and first.preview.size[0] > 0


def test_encrypted_or_unsure_streams_are_read_by_mupdf(shared_data, tmp_path):
    """An encrypted PDF (even with a blank password, where is_encrypted reads False), a PDF
    in memory, and a stream whose /Length stops short of endstream all go through MuPDF."""
    plain = scans_pdf(tmp_path / "plain.pdf", chapbook_pages(shared_data)[:1])
    locked = tmp_path / "locked.pdf"
    with pymupdf.open(plain) as doc:
        doc.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="")
    short = tmp_path / "short.pdf"
    data = _jpeg((300, 400))
    _one_image_pdf(short, data, 300, 400)
    short.write_bytes(short.read_bytes().replace(b"/Length %d " % len(data),
                                                 b"/Length %d " % (len(data) - 7)))
    for doc in (reader.open_pdf(locked), pymupdf.open(stream=plain.read_bytes()),
                reader.open_pdf(short)):
        with doc:
            read = _scans_read(doc)
            assert [fast for fast, _ in read] == [None] * len(read)
            scan = reader._single_scan(doc, doc[0])  # MuPDF's bytes (cut short by /Length)
            assert scan is not None and scan[0] == read[0][1] and scan[0][:2] == b"\xff\xd8"


def test_a_new_build_removes_job_folders_unused_for_a_day_and_nothing_else(shared_data,
                                                                          tmp_path):
    """Each build's job folder (zip, gallery, review tiles) would stay on the server for
    ever; the next build removes those unused for JOB_KEEP_S, and only those."""
    from archive.ui import JOB_KEEP_S, JOB_PREFIX

    old, fresh, other = (tmp_path / f"{JOB_PREFIX}old", tmp_path / f"{JOB_PREFIX}fresh",
                         tmp_path / "someone-elses-old")
    for folder in (old, fresh, other):
        (folder / "review").mkdir(parents=True)
        (folder / "x_dataset.zip").write_bytes(b"PK")
    day_ago = time.time() - JOB_KEEP_S - 60
    for path in (old, old / "review", old / "x_dataset.zip", other):
        os.utime(path, (day_ago, day_ago))
    (fresh / "review").touch()  # an old folder a review clicked in a minute ago is in use
    os.utime(fresh, (day_ago, day_ago))
    os.utime(fresh / "x_dataset.zip", (day_ago, day_ago))
    pdf = scans_pdf(tmp_path / "one.pdf", chapbook_pages(shared_data)[:1])
    last = list(run_job([pdf], sayer("en"), work_dir=tmp_path, size=64))[-1]
    assert last.error is None and last.zip_path.parent.name.startswith(JOB_PREFIX)
    assert not old.exists() and fresh.exists() and other.exists()


def test_every_archive_error_code_has_words_in_both_languages():
    """Each reason an ArchiveError (or a crash) can give has a sentence in English and in
    Spanish whose blanks are exactly the fields that code carries."""
    strings = ui_text.strings()
    assert ERROR_KEYS.keys() == CODES.keys() | CRASH_CODES.keys()
    blank = re.compile(r"\{(\w+)\}")
    for code, fields in {**CODES, **CRASH_CODES}.items():
        en, es = strings["en"][ERROR_KEYS[code]], strings["es"][ERROR_KEYS[code]]
        assert sorted(blank.findall(en)) == sorted(blank.findall(es)) == sorted(fields), code
        assert en != es, code


def _raised_lines() -> list[tuple[str, int, str, bool]]:
    """Every ``raise ArchiveError(...)`` in the packages: (file, line, the English line with
    each blank as 7, whether it passes its own code)."""
    import ast

    found = []
    for path in sorted((ROOT / "archive").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ArchiveError"):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr):
                line = "".join(v.value if isinstance(v, ast.Constant) else "7" for v in arg.values)
            else:
                line = getattr(archive.distributor, arg.id) if isinstance(arg, ast.Name) \
                    else arg.value
            coded = any(k.arg == "code" and k.value.value in CODES for k in node.keywords)
            found.append((path.name, node.lineno, line, coded))
    return found


def test_every_archive_error_the_packages_raise_has_a_reason_code():
    """Every raiser passes a known code: the app words a code, never the English line."""
    import archive.distributor  # noqa: F401 - its INSTALL_HINT is read above

    lines = _raised_lines()
    assert len(lines) > 40
    for name, lineno, line, coded in lines:
        assert coded, (name, lineno, line)


def test_ui_job_errors_are_one_sentence_in_the_page_language_naming_the_file_only(
        shared_data, tmp_path):
    """A text file renamed .pdf, an empty file, a broken PDF, a locked one, one with no pages,
    one over the page cap: each a sentence in Spanish (or English) with the file's own name,
    never the folder gradio keeps it in, never the English line the CLI prints."""
    folder = tmp_path / "gradio" / "4f2a9c0e"  # where gradio keeps an upload
    folder.mkdir(parents=True)
    text = folder / "notapdf.pdf"
    text.write_text("Lista de grabados del pliego, escrita a mano.\n", encoding="utf-8")
    empty = folder / "vacio.pdf"
    empty.write_bytes(b"")
    broken = folder / "roto.pdf"
    broken.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 16)
    plain = scans_pdf(tmp_path / "plain.pdf", chapbook_pages(shared_data)[:2])
    locked = folder / "cerrado.pdf"
    with pymupdf.open(plain) as doc:
        doc.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u")
    no_pages = folder / "sin_paginas.pdf"
    no_pages.write_bytes(b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n"
                         b"2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj\n"
                         b"trailer <</Root 1 0 R>>\n%%EOF\n")
    two_pages = folder / "dos.pdf"
    two_pages.write_bytes(plain.read_bytes())
    cases = [(text, {}, "archive_error_not_pdf", {}),
             (empty, {}, "archive_error_empty", {}),
             (broken, {}, "archive_error_corrupt", {}),
             (locked, {}, "archive_error_encrypted", {}),
             (no_pages, {}, "archive_error_no_pages", {}),
             (two_pages, {"max_pages": 1}, "archive_error_too_many_pages",
              {"pages": "2", "max_pages": "1"})]
    for path, options, key, fields in cases:
        english = ""
        try:
            archive.build_dataset([path], tmp_path / "cli.zip", **options)
        except ArchiveError as exc:
            english = str(exc)
        assert english, path.name
        for lang in ("es", "en"):
            error = list(run_job([path], sayer(lang), work_dir=tmp_path, **options))[-1].error
            detail = say(lang, key, name=path.name, **fields)
            assert error == say(lang, "archive_failed", detail=detail), (path.name, error)
            assert str(folder) not in error and english not in error
        assert path.name in error or "pages" in fields


def test_a_full_disk_in_the_tab_is_a_spanish_sentence(shared_data, tmp_path):
    """The job's zip outgrows what the server may write (RLIMIT_FSIZE, as a full disk):
    the tab says so in the page's language, without the zip's path."""
    import resource
    import subprocess
    import sys

    pdf = scans_pdf(tmp_path / "grande.pdf", chapbook_pages(shared_data)[:6])
    script = ("import sys; from pathlib import Path; from archive.ui import run_job; "
              "from ui_text import sayer; print(list(run_job([Path(sys.argv[1])], sayer('es'), "
              "work_dir=Path(sys.argv[2])))[-1].error)")

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000))

    proc = subprocess.run([sys.executable, "-c", script, str(pdf), str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, preexec_fn=limit)
    said = proc.stdout.strip()
    assert said == say("es", "archive_failed", detail=say("es", "archive_error_disk_full")), \
        proc.stderr[-2000:]
    assert str(tmp_path) not in said


def test_a_crash_is_a_sentence_without_the_exception_text(tmp_path):
    """Anything that is not an ArchiveError (a bug, a killed worker, memory) is one sentence;
    its text, which may hold a path, stays in the log."""
    bug = RuntimeError(f"worker died reading {tmp_path}/x.pdf")
    assert words(error_said(bug), sayer("es")) == say("es", "archive_error_crash")
    assert (words(error_said(MemoryError()), sayer("en"))
            == say("en", "archive_error_out_of_memory"))
    unknown = ArchiveError("something new", code="not_a_code_yet")
    assert words(error_said(unknown), sayer("es")) == say("es", "archive_error_other")


def test_the_tab_says_its_errors_again_in_the_new_language(tmp_path, shared_data, monkeypatch):
    """archive_run keeps what its status line says (a code and fields); after a language
    switch relang writes it again: an error, a server pick outside the data folder."""
    from tabs.archive import archive_relang, archive_run

    fake = tmp_path / "notapdf.pdf"
    fake.write_text("hello")
    args = ([str(fake)], [], "figure", "figures", "", "1024", "", False,
            "an engraving from {source}, page {page}", "", 48, False)
    *_, last = archive_run(*args, "", "es")
    status, said = last[0], last[-1]
    assert "notapdf.pdf no es un archivo PDF" in status and "not a PDF" not in status
    again, message, tiles = archive_relang(said, None, None, 48, "en")
    assert "The build stopped: notapdf.pdf is not a PDF file" in again
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("BORDE_DATA_DIR", str(root))
    *_, last = archive_run(None, ["../secreto.pdf"], *args[2:], "", "es")
    assert "secreto.pdf está fuera de la carpeta" in last[0] and str(tmp_path) not in last[0]
