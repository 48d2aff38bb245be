"""A collection as parts: units of work, their zips, and how a run resumes. No Ray here.

Each unit of work is one PDF, or a range of at most ``part_pages`` of its pages (so one
9 GB volume spreads out too). Unit k, in collection order, becomes
``OUT_DIR/part-{k:05d}.zip``, a complete dataset zip in the single-machine layout.
``build_unit`` is a unit's whole job: the single-machine ``build_dataset`` on its page
range, with the collection-wide source names and ``keep_duplicates=True``, into a
uniquely named pending zip (a retried attempt never meets its killed one). ``finalise``
then, strictly in unit order, replays the pending zip as ``archive.apply`` replays a
dataset, against one collection-wide ``Deduper``, and writes the part from the stored
bytes (never re-decoded). So the union of the parts is byte for byte the single-machine
zip of the same PDFs and options. ``holds`` replays a finished part on a re-run: it both
re-seeds the ``Deduper`` and checks that the part still holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import shutil
import time
import uuid
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from archive.apply import Dataset, read_dataset, replay, write_replayed
from archive.decisions import DUPLICATE
from archive.dedup import Deduper
from archive.errors import ArchiveError
from archive.iiif import book as iiif_book
from archive.pipeline import (
    Options,
    build_dataset,
    build_info,
    make_plan,
    own_peak_rss_mb,
    source_names,
)

PART_PAGES = 200  # a unit of a few minutes on one core: fine-grained, yet few pending files
SUCCESS, MANIFEST, JOB, PENDING = "_SUCCESS", "manifest.csv", "_job.json", "_pending"
POLL_S = 0.5  # how often a task reports its pages, and the driver looks


@dataclass(frozen=True)
class Unit:
    """One task's share of the collection: some pages of one PDF."""

    k: int
    path: str
    source: str
    pages: str  # 1-based ``--pages`` spec, e.g. "1-200"
    count: int

    @property
    def part(self) -> str:
        return f"part-{self.k:05d}.zip"


@dataclass
class UnitResult:
    """What a task sends back: where its pending zip is, or why there is none."""

    k: int
    pending: str | None
    error: str | None
    pid: int
    peak_rss_mb: float
    notes: list[str] = field(default_factory=list)  # the build's warnings (no Tesseract)


@dataclass
class CollectionEvent:
    """Where the run stands, for a progress bar."""

    done: int  # pages in finalised parts, plus pages the running tasks have reported
    total: int
    items: int
    parts: int
    units: int


@dataclass
class CollectionReport:
    """The run's outcome, as ``OUT_DIR/_SUCCESS`` holds it."""

    out: str
    pages: int = 0
    kept: int = 0
    items: int = 0
    duplicates: int = 0
    bad: int = 0
    seconds: float = 0.0
    pages_this_run: int = 0
    parts: list[str] = field(default_factory=list)
    parts_built: int = 0
    parts_resumed: int = 0
    errors: dict[str, str] = field(default_factory=dict)
    driver_peak_rss_mb: float = 0.0
    worker_peak_rss_mb: dict[str, float] = field(default_factory=dict)
    ray: str = ""
    ray_start_s: float = 0.0  # in ``seconds``: starting or joining Ray, paid once per run
    notes: list[str] = field(default_factory=list)  # the parts' warnings, each said once

    @property
    def pages_per_s(self) -> float:
        return self.pages_this_run / self.seconds if self.seconds > 0 else 0.0

    @property
    def reduction(self) -> float:
        return 1 - self.kept / self.pages if self.pages else 0.0

    def to_json(self) -> str:
        body = asdict(self) | {"pages_per_s": round(self.pages_per_s, 2),
                               "reduction": round(self.reduction, 4)}
        return json.dumps(body, indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> CollectionReport:
        row = json.loads(text)
        return cls(**{k: v for k, v in row.items() if k in cls.__dataclass_fields__})

    def summary(self) -> str:
        resumed = f" ({self.parts_resumed} carried over)" if self.parts_resumed else ""
        dups = f", {self.duplicates} duplicate(s) dropped" if self.duplicates else ""
        bad = f", {self.bad} bad page(s) skipped" if self.bad else ""
        errors = "".join(f"\n  error: {s}: {e}" for s, e in self.errors.items())
        warnings = "".join(f"\n  warning: {note}" for note in self.notes)
        start = f", Ray start {self.ray_start_s:.0f} s" if self.ray_start_s >= 1 else ""
        speed = (f"{self.pages_per_s:.1f} pages/s{start}" if self.pages_this_run
                 else "nothing left to build")
        return (f"{self.pages} pages in {len(self.parts)} part(s){resumed}, {self.items} "
                f"item(s) from {self.kept} page(s){dups}{bad}; {speed} -> {self.out}{errors}"
                f"{warnings}")


def _spec(indices: list[int]) -> str:
    """0-based page indices as a 1-based ``--pages`` spec of contiguous runs."""
    runs: list[str] = []
    start = prev = indices[0]
    for i in [*indices[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        runs.append(f"{start + 1}-{prev + 1}")
        if i is not None:
            start = prev = i
    return ",".join(runs)


def plan_units(paths: list[str | Path], opts: Options, part_pages: int = PART_PAGES
               ) -> tuple[list[Unit], dict[str, str]]:
    """The collection's units in order, and the sources that cannot be read (with why).

    Names come from the whole list, as a single-machine build of it would give them.
    """
    if part_pages < 1:
        raise ArchiveError("--part-pages must be at least 1", code="bad_option")
    if not paths:
        raise ArchiveError("no input PDF given", code="no_input")
    units: list[Unit] = []
    errors: dict[str, str] = {}
    paths = iiif_book.each_book(paths)
    for path, source in zip(paths, source_names(paths), strict=True):
        try:
            [(_, _, indices)] = make_plan([path], opts, [source])
        except ArchiveError as exc:
            errors[source] = str(exc)
            continue
        for lo in range(0, len(indices), part_pages):
            chunk = indices[lo : lo + part_pages]
            where = str(path) if iiif_book.is_iiif(path) else str(Path(path).resolve())
            units.append(Unit(len(units), where, source, _spec(chunk), len(chunk)))
    return units, errors


def _code_hash() -> str:
    """The archive code's fingerprint: parts built by other code must not be mixed in."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    files = [*here.glob("*.py"), *here.glob("iiif/*.py"), *here.glob("*.json"),
             here.parent / "buckets.py"]
    for f in sorted(files):
        if f.name not in ("ui.py", "cli.py"):  # the tab and the argument parser cut no crop
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def job_card(paths: list[str | Path], units: list[Unit], opts: Options, part_pages: int
             ) -> dict:
    """What decides the bytes of every part; a re-run resumes only the same job."""
    skip = {"workers", "resume", "overwrite", "password", "max_pages", "thumbnails", "scan_only"}
    names = source_names(paths)
    sizes = [Path(p).stat().st_size if Path(p).is_file() else None for p in paths]
    options = {k: v for k, v in asdict(opts).items() if k not in skip}
    options["decisions"] = sorted([*k, v] for k, v in (opts.decisions or {}).items())
    return {
        "options": options,
        "part_pages": part_pages,
        "inputs": [[n, s] for n, s in zip(names, sizes, strict=True)],
        "units": [[u.source, u.pages] for u in units],
        "code": _code_hash(),
    }


def build_unit(unit: Unit, options: dict, pending_dir: str, tracker=None) -> UnitResult:
    """One Ray task: the single-machine build of the unit's pages, duplicates kept."""
    pending = Path(pending_dir) / f"{unit.part[:-4]}-{uuid.uuid4().hex[:12]}.zip"
    opts = options | {"pages": unit.pages, "keep_duplicates": True, "workers": 1,
                      "resume": False, "overwrite": False, "scan_only": False}

    last = [0.0]

    def report(event) -> None:  # a few calls a second, not one a page
        now = time.monotonic()
        if tracker is not None and (now - last[0] >= POLL_S or event.done == event.total):
            tracker.report.remote(unit.k, event.done)
            last[0] = now

    error, notes = None, []
    try:
        notes = build_dataset([unit.path], pending, progress=report, names=[unit.source],
                              **opts).notes
    except ArchiveError as exc:
        error = str(exc)
        Path(str(pending) + ".partial").unlink(missing_ok=True)
    return UnitResult(unit.k, None if error else str(pending), error, os.getpid(),
                      own_peak_rss_mb(), notes)


def holds(part: Path, seen: Deduper, opts: Options) -> Dataset | None:
    """A finished part, read back, if its decisions hold against ``seen`` (which it
    then seeds); None if they do not.

    The part is replayed as ``archive.apply`` replays a dataset: its duplicates are
    candidates again, so it replays to its own rows exactly when they still hold.
    """
    try:
        data = read_dataset(part)
        again = replay(data, opts.decisions or {}, seen, opts.keep_duplicates)
    except ArchiveError:
        return None
    before = [(r.kept, r.reason) for r in data.regions]
    after = [(it.region.kept, it.region.reason) for _, items in again for it in items]
    return data if before == after else None


def finalise(pending: Path, part: Path, seen: Deduper, opts: Options) -> None:
    """Write the final part from a pending zip: de-duplicated, its bytes copied as stored."""
    data = read_dataset(pending)
    pages = replay(data, opts.decisions or {}, seen, opts.keep_duplicates)
    write_replayed(data, pages, part, build_info(opts), overwrite=True)


def tally(report: CollectionReport, data: Dataset, manifest) -> int:
    """Add a finished part's counts to the report and its rows to the merged manifest."""
    part, pages, regions = data.path, data.pages, data.regions
    with zipfile.ZipFile(part) as zf:
        manifest.write(zf.read(MANIFEST).split(b"\n", 1)[1])  # its rows, as they are
    report.parts.append(part.name)
    report.pages += len(pages)
    report.kept += sum(p.kept for p in pages)
    report.bad += sum(math.isnan(p.score) for p in pages)
    report.items += sum(r.kept for r in regions)
    report.duplicates += sum(r.reason.startswith(DUPLICATE) for r in regions)
    return len(pages)


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def clean(out_dir: Path) -> None:
    """Remove what an interrupted or killed run left: pending zips and half-written files."""
    shutil.rmtree(out_dir / PENDING, ignore_errors=True)
    for leftover in out_dir.glob("*.partial"):
        leftover.unlink(missing_ok=True)


@contextlib.contextmanager
def locked(out_dir: Path):
    """One driver per output folder: two would write the same parts."""
    with open(out_dir / ".lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ArchiveError(f"another run is writing to {out_dir}",
                               code="parts_in_use") from None
        yield


def check_job(out_dir: Path, card: dict, overwrite: bool) -> None:
    """Refuse to mix parts of another job into this one; ``overwrite`` starts afresh."""
    job = out_dir / JOB
    old = job.read_text() if job.exists() else None
    parts = sorted(out_dir.glob("part-*.zip"))
    if overwrite:
        for f in [*parts, out_dir / SUCCESS, out_dir / MANIFEST, job]:
            f.unlink(missing_ok=True)
    elif parts and old is not None and json.loads(old) != card:
        raise ArchiveError(f"{out_dir} holds parts of another job (other PDFs, options or "
                           "archive code): use an empty folder, or --overwrite to start over",
                           code="parts_in_use")
    elif old is None and parts:
        raise ArchiveError(f"{out_dir} holds parts of an unknown job: use an empty folder, "
                           "or --overwrite to start over", code="parts_in_use")
    if overwrite or old is None or not parts:
        write_atomic(job, (json.dumps(card, indent=1) + "\n").encode())


def reseed(out: Path, parts: list[str], opts: Options) -> Deduper:
    seen = Deduper()
    for name in parts:
        holds(out / name, seen, opts)
    return seen


def join_errors(old: str | None, new: str) -> str:
    return new if old is None or new in old else f"{old}; {new}"
