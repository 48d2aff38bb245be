"""The collection on a local Ray (2 CPUs): the same bytes as one machine, through kills,
a corrupt PDF, Ctrl-C and a resume.

One Ray session serves the module (it takes seconds to start); the PDFs are small.
"""

from __future__ import annotations

import csv
import io
import json
import random
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import psutil
import pytest

import archive
from archive import distributor
from archive.dedup import Deduper
from archive.distributor import build_collection, holds
from archive.errors import ArchiveError
from archive.pipeline import Options, source_names
from bench.magazine import write_magazine_pdf
from tests.pdf_factory import chapbook_pages, scans_pdf
from tests.zips import region_rows

ray = pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[1]
OPTIONS = {"size": 256}


@pytest.fixture(scope="module")
def ray_session():
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="warning")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def collection(shared_data, tmp_path_factory) -> list[Path]:
    """Three real PDFs, a synthetic magazine scan, a corrupt file; two chapbook pages repeat."""
    tmp = tmp_path_factory.mktemp("collection")
    pages = chapbook_pages(shared_data)
    corrupt = tmp / "corrupt.pdf"
    corrupt.write_bytes(b"%PDF-1.4\n" + random.Random(0).randbytes(4000))
    magazine = tmp / "magazine.pdf"
    write_magazine_pdf(magazine, 8)
    return [
        shared_data / "pdfs" / "linn.pdf",
        scans_pdf(tmp / "chapbook.pdf", pages[:3]),
        corrupt,
        magazine,
        shared_data / "pdfs" / "lichtenstein.pdf",
        scans_pdf(tmp / "chapbook_reprint.pdf", pages[1:4]),  # pages 2 and 3 again
    ]


@pytest.fixture(scope="module")
def reference(collection, tmp_path_factory) -> Path:
    """The single-machine zip of the readable PDFs, named as in the whole collection."""
    good = [(p, n) for p, n in zip(collection, source_names(collection), strict=True)
            if p.name != "corrupt.pdf"]
    out = tmp_path_factory.mktemp("reference") / "ref.zip"
    archive.build_dataset([p for p, _ in good], out, names=[n for _, n in good], **OPTIONS)
    return out


def _csv_rows(zf: zipfile.ZipFile, name: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(zf.read(name).decode())))[1:]


def dataset(zips: list[Path]) -> dict[str, object]:
    """Every image, candidate and caption's bytes, in order, and the rows (the manifest
    without ``ms``)."""
    files: list[tuple[str, bytes]] = []
    meta: list[dict] = []
    regions: list[list[str]] = []
    manifest: list[list[str]] = []
    for z in zips:
        with zipfile.ZipFile(z) as zf:
            names = zf.namelist()
            assert names[-4:] == ["metadata.jsonl", "manifest.csv", "regions.csv",
                                  "build.json"], z
            files += [(n, zf.read(n)) for n in names if n.startswith(("images/", "candidates/"))]
            meta += [json.loads(x) for x in zf.read("metadata.jsonl").decode().splitlines()]
            regions += _csv_rows(zf, "regions.csv")
            manifest += [r[:-1] for r in _csv_rows(zf, "manifest.csv")]
    return {"files": files, "metadata": meta, "regions": regions, "manifest": manifest}


def parts(out: Path) -> list[Path]:
    return sorted(out.glob("part-*.zip"))


def stats(out: Path) -> dict[str, tuple[int, int]]:
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in out.iterdir()}


def test_parts_equal_the_single_machine_build(ray_session, collection, reference, tmp_path):
    out = tmp_path / "out"
    events = []
    report = build_collection(collection, out, part_pages=2, progress=events.append, **OPTIONS)
    got, want = dataset(parts(out)), dataset([reference])
    assert got == want
    assert len(parts(out)) == len(report.parts) == 10  # 1 + 2 + 4 + 1 + 2 units
    assert not (out / "_pending").exists() and not list(out.glob("*.partial"))

    # De-duplication ran across parts: the reprint's pages are dropped as duplicates of
    # crops kept in another part.
    cross = []
    for z in parts(out):
        with zipfile.ZipFile(z) as zf:
            own = set(zf.namelist())
            rows = list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))
        cross += [r["source"] for r in rows if r["reason"].startswith("duplicate of ")
                  and r["reason"].removeprefix("duplicate of ") not in own]
    assert "chapbook_reprint" in cross
    assert report.duplicates == sum(r[10].startswith("duplicate of ") for r in got["regions"])

    # The corrupt PDF is one source error; the merged manifest and the summary add up.
    summary = json.loads((out / "_SUCCESS").read_text())
    assert list(summary["errors"]) == ["corrupt"] and "corrupt.pdf" in summary["errors"]["corrupt"]
    assert summary["pages"] == len(want["manifest"]) == 16
    assert summary["items"] == len(want["metadata"]) > 0
    with open(out / "manifest.csv", newline="") as fh:
        assert [r[:-1] for r in csv.reader(fh)][1:] == want["manifest"]
    assert events[-1].done == events[-1].total == 16
    assert all(a.done <= b.done for a, b in zip(events, events[1:], strict=False))

    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset("imagefolder", data_files=str(out / "*.zip"), split="train",
                               cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == report.items


def _kill_one_running_task(out: Path, killed: list[int], stop: threading.Event) -> None:
    """SIGKILL the first Ray worker seen running a unit that has started its zip."""
    me = psutil.Process()
    while not stop.is_set() and not killed:
        if list((out / "_pending").glob("*.partial")):
            for proc in me.children(recursive=True):
                try:
                    if proc.cmdline()[:1] == ["ray::build_unit"]:
                        proc.send_signal(signal.SIGKILL)
                        killed.append(proc.pid)
                        return
                except psutil.Error:
                    continue
        time.sleep(0.01)


def test_killed_worker_is_retried_and_the_result_is_identical(ray_session, collection, reference,
                                                             tmp_path):
    out = tmp_path / "out"
    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_one_running_task, args=(out, killed, stop))
    killer.start()
    try:
        report = build_collection(collection, out, part_pages=4, **OPTIONS)
    finally:
        stop.set()
        killer.join()
    assert killed, "no worker was caught mid-task"
    assert list(report.errors) == ["corrupt"]
    assert dataset(parts(out)) == dataset([reference])
    assert not (out / "_pending").exists()


def test_interrupt_keeps_complete_parts_and_a_rerun_resumes(ray_session, collection, reference,
                                                           tmp_path):
    out = tmp_path / "out"

    def interrupt(event):
        if event.parts >= 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_collection(collection, out, part_pages=2, progress=interrupt, **OPTIONS)
    kept = parts(out)
    left = sorted(str(f.relative_to(out)) for f in out.rglob("*"))
    assert left == [".lock", "_job.json", "part-00000.zip", "part-00001.zip", "part-00002.zip"]
    assert all(zipfile.ZipFile(p).testzip() is None for p in kept)
    before = stats(out)

    report = build_collection(collection, out, part_pages=2, **OPTIONS)
    assert report.parts_resumed == 3 and report.parts_built == 7
    assert all(stats(out)[p.name] == before[p.name] for p in kept), "complete parts rewritten"
    assert dataset(parts(out)) == dataset([reference])

    # The same command once more, through the CLI: nothing to do, nothing written.
    done = stats(out)
    proc = subprocess.run(
        [sys.executable, "-m", "archive", *map(str, collection), "-o", str(out), "--ray",
         "local", "--part-pages", "2", "--size", "256"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "16 pages in 10 part(s)" in proc.stdout and "corrupt" in proc.stdout, proc.stdout
    assert stats(out) == done


def flaky_build_unit(unit, options, pending_dir, tracker=None):
    """``build_unit``, except that unit 1 fails while OUT_DIR holds a ``fail-unit-1`` file."""
    if unit.k == 1 and (Path(pending_dir).parent / "fail-unit-1").exists():
        raise ArchiveError("simulated failure")
    return distributor.build_unit(unit, options, pending_dir, tracker)


def test_a_part_built_after_a_failed_unit_is_rebuilt_when_that_unit_succeeds(
        ray_session, shared_data, tmp_path, monkeypatch):
    pages = chapbook_pages(shared_data)
    pdfs = [scans_pdf(tmp_path / "chapbook.pdf", pages[:3]),
            scans_pdf(tmp_path / "chapbook_reprint.pdf", pages[1:4])]  # reprints 2 and 3
    reference = tmp_path / "ref.zip"
    archive.build_dataset(pdfs, reference, **OPTIONS)
    out = tmp_path / "out"
    out.mkdir()
    (out / "fail-unit-1").touch()
    monkeypatch.setattr(distributor, "build_unit", flaky_build_unit)
    # Units: chapbook 1-2, chapbook 3 (fails), reprint 1-2 (its page 2 is chapbook's 3), 3.
    first = build_collection(pdfs, out, part_pages=2, **OPTIONS)
    assert "simulated failure" in first.errors["chapbook"]
    assert [p.name for p in parts(out)] == ["part-00000.zip", "part-00002.zip", "part-00003.zip"]
    before = stats(out)

    (out / "fail-unit-1").unlink()
    second = build_collection(pdfs, out, part_pages=2, **OPTIONS)
    assert not second.errors and second.parts_resumed == 2 and second.parts_built == 2
    assert dataset(parts(out)) == dataset([reference])
    after = stats(out)
    assert after["part-00000.zip"] == before["part-00000.zip"]
    assert after["part-00002.zip"] != before["part-00002.zip"], "the stale part was kept"


def test_a_finished_part_holds_only_against_the_hashes_it_was_built_with(shared_data,
                                                                       tmp_path):
    """Resume replays a part's de-duplication: its own drops hold; an earlier copy of one
    of its crops (an earlier unit that had failed, then succeeded) makes it stale."""
    pages = chapbook_pages(shared_data)
    pdf = scans_pdf(tmp_path / "c.pdf", [pages[0], pages[1], pages[0]])  # page 3 repeats 1
    part = tmp_path / "part-00000.zip"
    archive.build_dataset([pdf], part, **OPTIONS)
    rows = region_rows(part)
    kept = [r for r in rows if r["kept"] == "1"]
    assert kept and any(r["reason"].startswith("duplicate of ") for r in rows)
    opts = Options(**OPTIONS).check()
    assert holds(part, Deduper(), opts)
    earlier = Deduper()
    earlier.add(kept[-1]["phash"], "images/earlier_p00001_f1.jpg")
    assert not holds(part, earlier, opts)


def test_without_ray_the_cli_says_how_to_install_it(collection, tmp_path):
    code = ("import sys; sys.modules['ray'] = None; from archive.cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    proc = subprocess.run(
        [sys.executable, "-c", code, str(collection[0]), "-o", str(tmp_path / "out"), "--ray"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: --ray needs Ray: pip install -r requirements-scale.txt"
    ]
    assert not (tmp_path / "out").exists()


def test_the_curators_decisions_stick_on_ray_too(ray_session, shared_data, tmp_path):
    """A collection's decisions file (beside OUT_DIR) gives the parts a one-machine build
    with the same decisions would give."""
    from archive import decisions

    pages = chapbook_pages(shared_data)
    pdf = scans_pdf(tmp_path / "c.pdf", [pages[0], pages[1], pages[0]])
    plain = tmp_path / "plain.zip"
    archive.build_dataset([pdf], plain, **OPTIONS)
    rows = region_rows(plain)
    dropped = next(r for r in rows if r["kept"] == "1")
    choice = {(dropped["source"], int(dropped["page"]), int(dropped["index"])): "drop"}
    decisions.save(decisions.sidecar(tmp_path / "out"), choice)
    build_collection([pdf], tmp_path / "out", part_pages=1, **OPTIONS)
    reference = tmp_path / "ref.zip"
    archive.build_dataset([pdf], reference, decisions=choice, **OPTIONS)
    assert dataset(parts(tmp_path / "out")) == dataset([reference]) != dataset([plain])


def test_a_parts_warning_reaches_the_collection_report_once(ray_session, shared_data,
                                                            tmp_path):
    """--ocr with no language data here: every part warns, _SUCCESS and the summary say so
    once, and the parts are still built."""
    from archive import ocr

    message = ocr.problem("xyz")
    assert message  # no Tesseract data is called "xyz"
    pages = chapbook_pages(shared_data)
    pdf = scans_pdf(tmp_path / "c.pdf", pages[:2])
    report = build_collection([pdf], tmp_path / "out", part_pages=1, ocr="xyz", **OPTIONS)
    assert len(report.parts) == 2 and not report.errors
    assert report.notes == [message]
    written = json.loads((tmp_path / "out" / "_SUCCESS").read_text())
    assert written["notes"] == [message]
    assert report.summary().count(message) == 1


def test_a_iiif_book_on_ray_equals_the_single_machine_build(tmp_path, monkeypatch):
    """A manifest's canvases split into parts like a PDF's pages: the same dataset. Its own
    Ray (the CLI's): a Ray started before the test would not know BORDE_ALLOW_PRIVATE_URLS."""
    from tests import iiif_servers as servers

    monkeypatch.setenv("BORDE_ALLOW_PRIVATE_URLS", "1")
    early = ROOT.parent / "shared" / "data" / "figures" / "early" / "images"
    pages = sorted(early.glob("*.jpg"))[20:28]
    with servers.level0(pages, tmp_path / "l0") as base:
        manifest = servers.manifest(base, [p.stem for p in pages], level0_sizes=True)
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            url = f"{docs}/book/manifest.json"
            archive.build_dataset([url], tmp_path / "one.zip", size=256)
            out = tmp_path / "ray"
            done = subprocess.run(
                [sys.executable, "-m", "archive", url, "-o", str(out), "--ray", "local",
                 "--workers", "2", "--part-pages", "3", "--size", "256"],
                cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(parts(out)) == 3
    got, want = dataset(parts(out)), dataset([tmp_path / "one.zip"])
    assert got == want and want["metadata"]
    assert all(row["origin"]["manifest"] == manifest["id"] for row in got["metadata"])
