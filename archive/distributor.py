"""A whole collection on a Ray cluster: the single-machine build, one page range per task.

The archive path stays reader -> figures -> filter -> resize -> writer; this module only
hands it out. Each unit of work is one PDF, or a range of at most ``part_pages`` of its
pages (so one 9 GB volume spreads out too). Unit k, in collection order, becomes
``OUT_DIR/part-{k:05d}.zip``, a complete dataset zip in the single-machine layout.

Plain Ray tasks, not Ray Data: a unit is already a streaming job that writes a zip, so
Ray Data's blocks would only add a copy. The driver keeps at most two tasks per cluster
CPU submitted and not yet finalised (``ray.wait``), so memory and the ``_pending/``
folder stay flat whatever the collection size.

Each task runs ``pipeline.iter_build`` on its page range, with the collection-wide
source names and ``keep_duplicates=True``, into a uniquely named pending zip (a retried
task never meets its killed attempt). The driver then, strictly in unit order, replays
the very same ``pipeline.dedupe`` over the pending zip's rows against one collection-wide
``Deduper`` and writes the final part from the stored entries' bytes (never re-decoded),
through ``DatasetWriter`` (temporary name, renamed when complete). So the union of the
parts is byte for byte the single-machine zip of the same PDFs and options.

A re-run of the same command skips complete parts: their ``regions.csv`` replays the
de-duplication, which both re-seeds the ``Deduper`` and checks the part still holds; only
missing (or, after an earlier unit first failed, stale) parts are rebuilt. A worker killed
mid-task is retried by Ray (``MAX_RETRIES``); a bad PDF becomes a per-source error in
``_SUCCESS``; Ctrl-C cancels the tasks and leaves only complete parts.

Every node must see the input PDFs and ``OUT_DIR`` at the same paths (shared storage), and
have the project's requirements installed; the ``archive`` package itself is shipped to a
cluster's workers with the job.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import math
import os
import re
import resource
import shutil
import socket
import sys
import time
import uuid
import zipfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from archive.apply import read_dataset, replay, write_replayed
from archive.decisions import DUPLICATE, sidecar
from archive.decisions import load as load_decisions
from archive.dedup import Deduper
from archive.errors import ArchiveError
from archive.pipeline import Options, build_dataset, build_info, make_plan, source_names
from archive.records import manifest_csv

PART_PAGES = 200  # a unit of a few minutes on one core: fine-grained, yet few pending files
MAX_RETRIES = 3  # a worker killed mid-task (node lost, OOM killer, SIGKILL) is retried
IN_FLIGHT_PER_CPU = 2
INSTALL_HINT = "--ray needs Ray: pip install -r requirements-scale.txt"
SUCCESS, MANIFEST, JOB, PENDING = "_SUCCESS", "manifest.csv", "_job.json", "_pending"
_POLL_S = 0.5


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
        start = f", Ray start {self.ray_start_s:.0f} s" if self.ray_start_s >= 1 else ""
        speed = (f"{self.pages_per_s:.1f} pages/s{start}" if self.pages_this_run
                 else "nothing left to build")
        return (f"{self.pages} pages in {len(self.parts)} part(s){resumed}, {self.items} "
                f"item(s) from {self.kept} page(s){dups}{bad}; {speed} -> {self.out}{errors}")


# --- planning -------------------------------------------------------------------------


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
        raise ArchiveError("--part-pages must be at least 1")
    if not paths:
        raise ArchiveError("no input PDF given")
    units: list[Unit] = []
    errors: dict[str, str] = {}
    for path, source in zip(paths, source_names([Path(p) for p in paths]), strict=True):
        try:
            [(_, _, indices)] = make_plan([path], opts, [source])
        except ArchiveError as exc:
            errors[source] = str(exc)
            continue
        for lo in range(0, len(indices), part_pages):
            chunk = indices[lo : lo + part_pages]
            units.append(Unit(len(units), str(Path(path).resolve()), source, _spec(chunk),
                              len(chunk)))
    return units, errors


def _shipped() -> list:
    """The project's modules a worker imports: the archive, and the SDXL buckets it sizes by."""
    import archive
    import buckets

    return [archive, buckets]


def _code_hash() -> str:
    """The archive code's fingerprint: parts built by other code must not be mixed in."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    files = [*here.glob("*.py"), *here.glob("*.json"), here.parent / "buckets.py"]
    for f in sorted(files):
        if f.name not in ("ui.py", "cli.py"):  # the tab and the argument parser cut no crop
            h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def job_card(paths: list[str | Path], units: list[Unit], opts: Options, part_pages: int
             ) -> dict:
    """What decides the bytes of every part; a re-run resumes only the same job."""
    skip = {"workers", "resume", "overwrite", "password", "max_pages", "thumbnails", "scan_only"}
    names = source_names([Path(p) for p in paths])
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


# --- the task ---------------------------------------------------------------------------


def build_unit(unit: Unit, options: dict, pending_dir: str, tracker=None) -> UnitResult:
    """One Ray task: the single-machine build of the unit's pages, duplicates kept."""
    pending = Path(pending_dir) / f"{unit.part[:-4]}-{uuid.uuid4().hex[:12]}.zip"
    opts = options | {"pages": unit.pages, "keep_duplicates": True, "workers": 1,
                      "resume": False, "overwrite": False, "scan_only": False}

    last = [0.0]

    def report(event) -> None:  # a few calls a second, not one a page
        now = time.monotonic()
        if tracker is not None and (now - last[0] >= _POLL_S or event.done == event.total):
            tracker.report.remote(unit.k, event.done)
            last[0] = now

    error = None
    try:
        build_dataset([unit.path], pending, progress=report, names=[unit.source], **opts)
    except ArchiveError as exc:
        error = str(exc)
        Path(str(pending) + ".partial").unlink(missing_ok=True)
    return UnitResult(unit.k, None if error else str(pending), error, os.getpid(), peak_rss_mb())


def _tracker_class() -> type:
    """A Ray actor the tasks tell how many pages they have done, for the driver's bar.

    Defined here so that it is pickled by value: its process imports Ray, not the archive.
    """

    class Tracker:
        def __init__(self) -> None:
            self.done: dict[int, int] = {}

        def report(self, k: int, done: int) -> None:
            self.done[k] = max(self.done.get(k, 0), done)

        def forget(self, k: int) -> None:
            self.done.pop(k, None)

        def pages(self) -> dict[int, int]:
            return self.done

    return Tracker


def peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM, which, unlike ru_maxrss, a fork+exec does not inherit."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- reading a part back, and replaying its de-duplication ------------------------------


def holds(part: Path, seen: Deduper, opts: Options) -> bool:
    """Whether a finished part's decisions hold against ``seen`` (which it then seeds).

    The part is replayed as ``archive.apply`` replays a dataset: its duplicates are
    candidates again, so it replays to its own rows exactly when they still hold.
    """
    try:
        data = read_dataset(part)
        again = replay(data, opts.decisions or {}, seen, opts.keep_duplicates)
    except ArchiveError:
        return False
    before = [(r.kept, r.reason) for r in data.regions]
    return before == [(it.region.kept, it.region.reason) for _, items in again for it in items]


def finalise(pending: Path, part: Path, seen: Deduper, opts: Options) -> None:
    """Write the final part from a pending zip: de-duplicated, its bytes copied as stored."""
    data = read_dataset(pending)
    pages = replay(data, opts.decisions or {}, seen, opts.keep_duplicates)
    write_replayed(data, pages, part, build_info(opts), overwrite=True)


# --- the driver -------------------------------------------------------------------------


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ArchiveError(INSTALL_HINT) from None
    return ray


def connect(ray, address: str, num_cpus: int | None = None) -> bool:
    """Start (``local``) or join (``auto``, an address) Ray; True if we must shut it down."""
    if ray.is_initialized():
        return False
    if address.lower().endswith(".pdf"):
        raise ArchiveError(f"--ray takes local, auto or an address, not {address!r}: put --ray "
                           "after the PDFs")
    quiet = {"logging_level": logging.WARNING, "include_dashboard": False}
    if address == "local":
        ray.init(address="local", num_cpus=num_cpus, **quiet)
        return True
    _check_reachable(address)
    env = {k: v for k, v in os.environ.items() if k.startswith("BORDE_")}
    try:
        ray.init(address=address, runtime_env={"py_modules": _shipped(), "env_vars": env},
                 **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        hint = ("" if os.environ.get("RAY_AUTH_MODE") else
                " (a cluster with token authentication also needs RAY_AUTH_MODE=token here)")
        raise ArchiveError(f"cannot join the Ray cluster at {address!r}: {exc}{hint}") from None
    return True


def _check_reachable(address: str) -> None:
    """Fail in seconds, not minutes, on a HOST:PORT nobody answers (Ray retries for long)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # "auto", or a form Ray itself will explain
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as exc:
        raise ArchiveError(f"cannot reach the Ray cluster at {address}: "
                           f"{exc.strerror or exc}") from None


def _tally(report: CollectionReport, part: Path, manifest) -> int:
    """Add a finished part's counts to the report and its rows to the merged manifest."""
    data = read_dataset(part)
    pages, regions = data.pages, data.regions
    with zipfile.ZipFile(part) as zf:
        manifest.write(zf.read(MANIFEST).split(b"\n", 1)[1])  # its rows, as they are
    report.parts.append(part.name)
    report.pages += len(pages)
    report.kept += sum(p.kept for p in pages)
    report.bad += sum(math.isnan(p.score) for p in pages)
    report.items += sum(r.kept for r in regions)
    report.duplicates += sum(r.reason.startswith(DUPLICATE) for r in regions)
    return len(pages)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".partial")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _clean(out_dir: Path) -> None:
    """Remove what an interrupted or killed run left: pending zips and half-written files."""
    shutil.rmtree(out_dir / PENDING, ignore_errors=True)
    for leftover in out_dir.glob("*.partial"):
        leftover.unlink(missing_ok=True)


@contextlib.contextmanager
def _locked(out_dir: Path):
    """One driver per output folder: two would write the same parts."""
    with open(out_dir / ".lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise ArchiveError(f"another run is writing to {out_dir}") from None
        yield


def _check_job(out_dir: Path, card: dict, overwrite: bool) -> None:
    """Refuse to mix parts of another job into this one; ``overwrite`` starts afresh."""
    job = out_dir / JOB
    old = job.read_text() if job.exists() else None
    parts = sorted(out_dir.glob("part-*.zip"))
    if overwrite:
        for f in [*parts, out_dir / SUCCESS, out_dir / MANIFEST, job]:
            f.unlink(missing_ok=True)
    elif parts and old is not None and json.loads(old) != card:
        raise ArchiveError(f"{out_dir} holds parts of another job (other PDFs, options or "
                           "archive code): use an empty folder, or --overwrite to start over")
    elif old is None and parts:
        raise ArchiveError(f"{out_dir} holds parts of an unknown job: use an empty folder, "
                           "or --overwrite to start over")
    if overwrite or old is None or not parts:
        _write_atomic(job, (json.dumps(card, indent=1) + "\n").encode())


def build_collection(
    paths: list[str | Path],
    out_dir: str | Path,
    address: str = "local",
    part_pages: int = PART_PAGES,
    num_cpus: int | None = None,
    progress: Callable[[CollectionEvent], None] | None = None,
    **options,
) -> CollectionReport:
    """Build ``OUT_DIR/part-NNNNN.zip``, ``manifest.csv`` and ``_SUCCESS`` on Ray.

    Uses the Ray session already initialised in this process if there is one; otherwise
    starts a local one (``address="local"``, ``num_cpus`` CPUs) or joins ``address``.
    """
    opts = Options(**options).check()
    _import_ray()  # say how to install it before anything is written
    if opts.decisions is None and sidecar(out_dir).exists():  # the curator's choices stick
        opts = replace(opts, decisions=load_decisions(sidecar(out_dir)))
    if opts.scan_only:
        raise ArchiveError("--scan-only runs on one machine; drop --ray")
    if num_cpus is not None and address != "local":
        raise ArchiveError("--workers is for one machine or --ray local; a cluster's own CPUs "
                           "decide")
    out = Path(out_dir)
    if out.suffix.lower() == ".zip":
        raise ArchiveError(f"with --ray, -o is a folder for the parts (got {out})")
    if not out.parent.is_dir():
        raise ArchiveError(f"output folder {out.parent} does not exist")
    out.mkdir(exist_ok=True)
    units, errors = plan_units(paths, opts, part_pages)
    with _locked(out):
        card = job_card(paths, units, opts, part_pages)
        _check_job(out, card, opts.overwrite)
        done = out / SUCCESS
        if done.exists() and all((out / u.part).exists() for u in units):
            report = CollectionReport.from_json(done.read_text())  # complete: write nothing
            return replace(report, seconds=0.0, pages_this_run=0, parts_built=0,
                           parts_resumed=len(report.parts), ray_start_s=0.0)
        for stale in (done, out / MANIFEST):  # both come back when the run completes
            stale.unlink(missing_ok=True)
        _clean(out)
        report = CollectionReport(str(out), errors=dict(errors), ray=address)
        sched = _Scheduler(address, num_cpus, asdict(opts), out)
        merged = out / (MANIFEST + ".partial")
        try:
            with open(merged, "wb") as manifest:
                manifest.write(manifest_csv([]))  # the header
                _drive(sched, units, out, report, progress, manifest, opts)
            os.replace(merged, out / MANIFEST)
        finally:
            sched.close()
            _clean(out)  # after the tasks are gone: none of them writes here any more
        report.driver_peak_rss_mb = round(peak_rss_mb(), 1)
        _write_atomic(done, report.to_json().encode())
    return report


class _Scheduler:
    """Tasks in unit order, at most ``IN_FLIGHT_PER_CPU`` per cluster CPU not yet finalised.

    Ray is started or joined only when a first unit needs building.
    """

    def __init__(self, address: str, num_cpus: int | None, options: dict, out: Path) -> None:
        self.address, self.num_cpus, self.options = address, num_cpus, options
        self.pending_dir = out / PENDING
        self.todo: list[Unit] = []
        self.refs: dict[int, object] = {}
        self.ray = None
        self.started = False
        self.start_s = 0.0

    def _start(self):
        if self.ray is None:
            ray = _import_ray()
            t0 = time.perf_counter()
            self.started = connect(ray, self.address, self.num_cpus)
            self.start_s = time.perf_counter() - t0
            self.ray = ray
            self.task = ray.remote(max_retries=MAX_RETRIES, retry_exceptions=False)(build_unit)
            self.tracker = ray.remote(num_cpus=0)(_tracker_class()).remote()
            self.pending_dir.mkdir(exist_ok=True)
        return self.ray

    def submit(self, unit: Unit) -> None:
        self._start()
        self.refs[unit.k] = self.task.remote(unit, self.options, str(self.pending_dir),
                                             self.tracker)

    def top_up(self) -> None:
        if not self.todo:
            return
        cpus = int(self._start().cluster_resources().get("CPU", 1))
        while self.todo and len(self.refs) < max(2, IN_FLIGHT_PER_CPU * cpus):
            self.submit(self.todo.pop(0))

    def result(self, k: int, tick: Callable[[dict[int, int]], None]) -> UnitResult:
        """Wait for unit k's task, telling ``tick`` the running tasks' pages meanwhile."""
        ray, ref = self.ray, self.refs[k]
        while not ray.wait([ref], timeout=_POLL_S)[0]:
            tick(ray.get(self.tracker.pages.remote()))
        del self.refs[k]
        self.tracker.forget.remote(k)
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as exc:
            return UnitResult(k, None, f"task failed ({_why(exc)})"[:300], 0, 0.0)

    def close(self) -> None:
        """Cancel what still runs (a Ctrl-C, an error) and leave Ray as we found it.

        A cancel lands a moment later, so wait for it: a task still finishing its zip
        would otherwise write into ``_pending/`` while it is being removed.
        """
        refs = list(self.refs.values())
        self.refs.clear()
        with contextlib.suppress(Exception):
            for ref in refs:
                self.ray.cancel(ref, force=True)
            if refs:
                self.ray.wait(refs, num_returns=len(refs), timeout=30)
        if self.started:
            self.ray.shutdown()


def _drive(sched: _Scheduler, units: list[Unit], out: Path, report: CollectionReport,
           progress: Callable[[CollectionEvent], None] | None, manifest, opts: Options) -> None:
    """Finalise every unit in order: resumed parts replayed, the others built by tasks."""
    total = sum(u.count for u in units)
    sched.todo = [u for u in units if not (out / u.part).exists()]
    seen = Deduper()
    finalised = 0
    running: dict[int, int] = {}  # unit -> pages done, of the units not finalised yet
    t0 = time.perf_counter()

    def tick(snapshot: dict[int, int] | None = None) -> None:
        if snapshot is not None:
            running.clear()
            running.update((k, n) for k, n in snapshot.items() if k in sched.refs)
        if progress is not None:
            progress(CollectionEvent(finalised + sum(running.values()), total, report.items,
                                     len(report.parts), len(units)))

    tick()
    for unit in units:
        sched.top_up()
        part = out / unit.part
        if unit.k not in sched.refs:
            if holds(part, seen, opts):
                finalised += _tally(report, part, manifest)
                report.parts_resumed += 1
                tick()
                continue
            # Built before an earlier part existed (that unit had failed): rebuild it.
            seen = _reseed(out, report.parts, opts)
            part.unlink(missing_ok=True)
            sched.submit(unit)
        result = sched.result(unit.k, tick)
        if result.pid:
            key = str(result.pid)
            report.worker_peak_rss_mb[key] = max(report.worker_peak_rss_mb.get(key, 0.0),
                                                 round(result.peak_rss_mb, 1))
        if result.error:
            report.errors[unit.source] = _join(report.errors.get(unit.source), result.error)
            running.pop(unit.k, None)
            continue
        finalise(Path(result.pending), part, seen, opts)
        Path(result.pending).unlink(missing_ok=True)
        running.pop(unit.k, None)
        pages = _tally(report, part, manifest)
        finalised += pages
        report.pages_this_run += pages
        report.parts_built += 1
        tick()
    report.seconds = time.perf_counter() - t0
    report.ray_start_s = round(sched.start_s, 2)


def _why(exc: BaseException) -> str:
    """The innermost cause of a Ray error, on one line, without the terminal colours."""
    for _ in range(5):
        inner = getattr(exc, "cause", None) or getattr(exc, "client_exc", None)
        if not isinstance(inner, BaseException) or inner is exc:
            break
        exc = inner
    lines = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def _reseed(out: Path, parts: list[str], opts: Options) -> Deduper:
    seen = Deduper()
    for name in parts:
        holds(out / name, seen, opts)
    return seen


def _join(old: str | None, new: str) -> str:
    return new if old is None or new in old else f"{old}; {new}"


# --- the command ------------------------------------------------------------------------


def main(inputs: list[str], out: str, address: str, part_pages: int | None,
         options: dict) -> int:
    """``python -m archive ... -o OUT_DIR --ray [local|auto|ADDRESS]``, with a page bar."""
    from tqdm import tqdm

    workers = options.pop("workers", None)
    bar = None

    def follow(event: CollectionEvent) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=event.total, unit="page", desc="building on Ray")
        bar.n = event.done
        bar.set_postfix(items=event.items, parts=f"{event.parts}/{event.units}", refresh=False)
        bar.refresh()

    try:
        try:
            report = build_collection(inputs, out, address, part_pages or PART_PAGES, workers,
                                      progress=follow, **options)
        finally:
            if bar is not None:
                bar.close()
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        kept = len(list(Path(out).glob("part-*.zip")))
        print(f"interrupted: {kept} complete part(s) kept in {out}; run the same command "
              "again to continue", file=sys.stderr)
        return 130
    print(report.summary())
    return 1 if report.errors and not report.parts else 0  # nothing at all could be built

