"""The curator's command on bad input, kills and full disks: clear words, no lost work."""

from __future__ import annotations

import csv
import io
import os
import random
import resource
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pymupdf
import pytest

from tests.pdf_factory import chapbook_pages, labelled_pages, scans_pdf

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args: str, limit_bytes: int | None = None, timeout: float = 120):
    def limit():
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "archive", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )


def assert_clear_error(proc, *words: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ")
    for w in words:
        assert w in last, last


def crcs(path: Path) -> dict[str, object]:
    with zipfile.ZipFile(path) as zf:
        out: dict[str, object] = {i.filename: i.CRC for i in zf.infolist()}
        out["manifest.csv"] = [
            r[:-1] for r in csv.reader(io.StringIO(zf.read("manifest.csv").decode()))
        ]
    return out


@pytest.fixture(scope="module")
def scans(shared_data) -> list[Path]:
    pages = labelled_pages(shared_data)
    ill = chapbook_pages(shared_data)[:8]  # woodcuts beside text: figure mode crops them
    txt = [p for p, label in pages if "dta_text" in str(p)][:8]
    return [x for pair in zip(ill, txt, strict=True) for x in pair]


@pytest.fixture(scope="module")
def pdf(scans, tmp_path_factory) -> Path:
    return scans_pdf(tmp_path_factory.mktemp("cli") / "mag.pdf", scans)


def test_not_a_pdf_empty_and_missing(tmp_path, shared_data):
    photo = next((shared_data / "pages" / "ufal" / "DRAW").iterdir())
    fake = tmp_path / "photo.pdf"
    fake.write_bytes(photo.read_bytes())
    assert_clear_error(run_cli(str(fake), "-o", str(tmp_path / "o.zip")), "not a PDF")
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    assert_clear_error(run_cli(str(empty), "-o", str(tmp_path / "o.zip")), "empty")
    assert_clear_error(
        run_cli(str(tmp_path / "nope.pdf"), "-o", str(tmp_path / "o.zip")), "no such"
    )
    assert not list(tmp_path.glob("o.zip*"))


def test_pdf_without_pages(tmp_path):
    bad = tmp_path / "nopages.pdf"
    bad.write_bytes(
        b"%PDF-1.4\n1 0 obj <</Type/Catalog/Pages 2 0 R>> endobj\n"
        b"2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj\ntrailer <</Root 1 0 R>>\n%%EOF\n"
    )
    assert_clear_error(run_cli(str(bad), "-o", str(tmp_path / "o.zip")), "no pages")


def test_encrypted_pdf_needs_its_password(pdf, tmp_path):
    doc = pymupdf.open(pdf)
    locked = tmp_path / "locked.pdf"
    doc.save(locked, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="secret")
    doc.close()
    out = tmp_path / "o.zip"
    assert_clear_error(run_cli(str(locked), "-o", str(out)), "encrypted", "--password")
    assert_clear_error(run_cli(str(locked), "-o", str(out), "--password", "nope"), "wrong password")
    ok = run_cli(
        str(locked), "-o", str(out), "--password", "secret", "--size", "64", "--pages", "1-2"
    )
    assert ok.returncode == 0, ok.stderr
    assert zipfile.ZipFile(out).testzip() is None


def test_truncated_pdf_never_crashes(pdf, tmp_path):
    data = pdf.read_bytes()
    for cut in (len(data) // 3, len(data) - 200):
        broken = tmp_path / f"cut{cut}.pdf"
        broken.write_bytes(data[:cut])
        out = tmp_path / f"cut{cut}.zip"
        proc = run_cli(str(broken), "-o", str(out), "--size", "64")
        assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, proc.stderr
        if proc.returncode == 0:
            rows = list(
                csv.DictReader(io.StringIO(zipfile.ZipFile(out).read("manifest.csv").decode()))
            )
            assert rows, "a repaired PDF still lists its pages"


def test_caption_template_cannot_reach_python(pdf, tmp_path):
    for template in ("{0.__class__}", "{source.__class__.__mro__}", "{page!r}", "{x}"):
        proc = run_cli(str(pdf), "-o", str(tmp_path / "o.zip"), "--caption", template)
        assert_clear_error(proc, "not allowed")


def test_scan_only_writes_the_manifest_and_a_histogram(pdf, tmp_path):
    proc = run_cli(str(pdf), "-o", str(tmp_path / "scan.csv"), "--scan-only")
    assert proc.returncode == 0, proc.stderr
    assert "<- threshold" in proc.stdout and "pages/s" in proc.stdout
    rows = list(csv.DictReader(io.StringIO((tmp_path / "scan.csv").read_text())))
    assert len(rows) == 16 and not (tmp_path / "scan.zip").exists()


def test_read_only_output_folder(pdf, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    if (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a read-only tmpfs here (needs root)")
    try:
        assert_clear_error(run_cli(str(pdf), "-o", str(ro / "o.zip")), "read-only")
    finally:
        subprocess.run(["umount", str(ro)], check=False)


def test_full_disk_keeps_the_partial_and_resumes(pdf, tmp_path):
    reference = tmp_path / "ref.zip"
    assert run_cli(str(pdf), "-o", str(reference), "--size", "256").returncode == 0
    out = tmp_path / "o.zip"
    # the disk fills after the first journal entry (8 pages): most crops now sit on the
    # first pages of this magazine, so half the zip came before it
    full = run_cli(
        str(pdf), "-o", str(out), "--size", "256", limit_bytes=reference.stat().st_size * 3 // 4
    )
    assert_clear_error(full, "disk full", "--resume")
    partial = tmp_path / "o.zip.partial"
    assert partial.exists() and partial.stat().st_size > 0 and not out.exists()
    again = run_cli(str(pdf), "-o", str(out), "--size", "256", "--resume")
    assert again.returncode == 0, again.stderr
    assert "carried over" in again.stdout
    assert crcs(out) == crcs(reference)


def test_sigkill_at_random_points_then_resume(scans, tmp_path):
    big = scans_pdf(tmp_path / "big.pdf", (scans * 10)[:150])
    reference = tmp_path / "ref.zip"
    args = ["--size", "384"]
    t0 = time.monotonic()
    assert run_cli(str(big), "-o", str(reference), *args).returncode == 0
    # Kill points scale with this machine's speed: a fixed delay outlives the whole
    # job on a fast machine, and the kill then lands on a finished process.
    ref_seconds = time.monotonic() - t0
    out = tmp_path / "o.zip"
    partial = tmp_path / "o.zip.partial"
    rng = random.Random(7)
    for attempt in range(3):
        extra = ["--resume"] if attempt else []
        proc = subprocess.Popen(
            [sys.executable, "-m", "archive", str(big), "-o", str(out), *args, *extra],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not partial.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(rng.uniform(0.05, 0.25) * ref_seconds)  # three kills stay within one run
        assert proc.poll() is None, "the job ended before the kill; the kill must land mid-run"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert not out.exists(), "no zip may appear under its final name before it is complete"
    done = run_cli(str(big), "-o", str(out), *args, "--resume")
    assert done.returncode == 0, done.stderr
    assert crcs(out) == crcs(reference)


def _children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def test_a_killed_worker_process_is_replaced_and_the_build_ends_whole(scans, tmp_path):
    """``--workers 2``: the OOM killer (here SIGKILL) takes the pool's process mid-build. A
    multiprocessing.Pool then waited forever for the chunk it lost; now the pool starts
    again, the chunks out are handed out again, and the zip is the same as an unbroken run's.
    """
    big = scans_pdf(tmp_path / "big.pdf", (scans * 10)[:120])
    args = ["--size", "384", "--workers", "2"]
    reference = tmp_path / "ref.zip"
    t0 = time.monotonic()
    assert run_cli(str(big), "-o", str(reference), *args, timeout=300).returncode == 0
    ref_seconds = time.monotonic() - t0
    out = tmp_path / "o.zip"
    proc = subprocess.Popen([sys.executable, "-m", "archive", str(big), "-o", str(out), *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "o.zip.partial").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2 * ref_seconds)
    workers = _children(proc.pid)
    assert proc.poll() is None and workers, "the kill must land mid-run, on a pool process"
    os.kill(workers[0], signal.SIGKILL)
    try:
        _, stderr = proc.communicate(timeout=max(120, 6 * ref_seconds))
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the build waited forever for the killed worker's pages")
    assert proc.returncode == 0, stderr
    assert "killed" in stderr  # the log says what happened
    assert crcs(out) == crcs(reference)


def test_a_pool_that_keeps_breaking_stops_the_build_with_its_reason():
    """Past MAX_RESTARTS new pools the build stops with a code the tab words, not a loop."""
    from archive.errors import ArchiveError
    from archive.workers import MAX_RESTARTS, Workers

    pool = Workers(1, len, fork=False, setup=os.getpid)  # spawned: both must pickle
    try:
        for _ in range(MAX_RESTARTS):
            pool.restart(12)
        assert pool.submit((1, 2, 3)).result(timeout=60) == 3  # a new pool works
        with pytest.raises(ArchiveError) as stopped:
            pool.restart(12)
        assert stopped.value.code == "workers_killed" and stopped.value.fields == {"page": 12}
    finally:
        pool.close()
