"""A whole collection on a Ray cluster: the single-machine build, one page range per task.

The archive path stays reader -> figures -> filter -> resize -> writer; this module only
hands it out, and ``parts`` (no Ray in it) says what a unit is, how its zip is finalised
and how a re-run resumes. Unit k, in collection order, becomes ``OUT_DIR/part-{k:05d}.zip``.

Plain Ray tasks, not Ray Data: a unit is already a streaming job that writes a zip, so
Ray Data's blocks would only add a copy. The driver keeps at most two tasks per cluster
CPU submitted and not yet finalised (``ray.wait``), so memory and the ``_pending/``
folder stay flat whatever the collection size.

Each task is ``parts.build_unit``: the single-machine build of its page range into a
pending zip. The driver finalises the parts strictly in unit order (``parts.finalise``:
the collection-wide de-duplication, the stored bytes copied), so the union of the parts
is byte for byte the single-machine zip of the same PDFs and options. A re-run skips
complete parts that still hold and redoes only missing (or stale) ones. A worker killed
mid-task is retried by Ray (``MAX_RETRIES``); a bad PDF becomes a per-source error in
``_SUCCESS``; Ctrl-C cancels the tasks and leaves only complete parts.

Every node must see the input PDFs and ``OUT_DIR`` at the same paths (shared storage), and
have the project's requirements installed; the ``archive`` package itself is shipped to a
cluster's workers with the job.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

from archive.apply import read_dataset
from archive.decisions import load as load_decisions
from archive.decisions import sidecar
from archive.dedup import Deduper
from archive.errors import ArchiveError
from archive.parts import (
    MANIFEST,
    PART_PAGES,
    PENDING,
    POLL_S,
    SUCCESS,
    CollectionEvent,
    CollectionReport,
    Unit,
    UnitResult,
    build_unit,
    check_job,
    clean,
    finalise,
    holds,
    job_card,
    join_errors,
    locked,
    plan_units,
    reseed,
    tally,
    write_atomic,
)
from archive.pipeline import Options, own_peak_rss_mb
from archive.records import manifest_csv

MAX_RETRIES = 3  # a worker killed mid-task (node lost, OOM killer, SIGKILL) is retried
IN_FLIGHT_PER_CPU = 2
INSTALL_HINT = "--ray needs Ray: pip install -r requirements-scale.txt"


def _shipped() -> list:
    """The project's modules a worker imports: the archive, and the SDXL buckets it sizes by."""
    import archive
    import buckets

    return [archive, buckets]


# --- the task ---------------------------------------------------------------------------


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


# --- the driver -------------------------------------------------------------------------


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ArchiveError(INSTALL_HINT, code="cluster") from None
    return ray


def connect(ray, address: str, num_cpus: int | None = None) -> bool:
    """Start (``local``) or join (``auto``, an address) Ray; True if we must shut it down."""
    if ray.is_initialized():
        return False
    if address.lower().endswith(".pdf"):
        raise ArchiveError(f"--ray takes local, auto or an address, not {address!r}: put --ray "
                           "after the PDFs", code="bad_option")
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
        raise ArchiveError(f"cannot join the Ray cluster at {address!r}: {exc}{hint}",
                           code="cluster") from None
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
                           f"{exc.strerror or exc}", code="cluster") from None


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
        raise ArchiveError("--scan-only runs on one machine; drop --ray", code="bad_option")
    if num_cpus is not None and address != "local":
        raise ArchiveError("--workers is for one machine or --ray local; a cluster's own CPUs "
                           "decide", code="bad_option")
    out = Path(out_dir)
    if out.suffix.lower() == ".zip":
        raise ArchiveError(f"with --ray, -o is a folder for the parts (got {out})",
                           code="bad_option")
    if not out.parent.is_dir():
        raise ArchiveError(f"output folder {out.parent} does not exist", code="no_folder")
    out.mkdir(exist_ok=True)
    units, errors = plan_units(paths, opts, part_pages)
    with locked(out):
        card = job_card(paths, units, opts, part_pages)
        check_job(out, card, opts.overwrite)
        done = out / SUCCESS
        if done.exists() and all((out / u.part).exists() for u in units):
            report = CollectionReport.from_json(done.read_text())  # complete: write nothing
            return replace(report, seconds=0.0, pages_this_run=0, parts_built=0,
                           parts_resumed=len(report.parts), ray_start_s=0.0)
        for stale in (done, out / MANIFEST):  # both come back when the run completes
            stale.unlink(missing_ok=True)
        clean(out)
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
            clean(out)  # after the tasks are gone: none of them writes here any more
        report.driver_peak_rss_mb = round(own_peak_rss_mb(), 1)
        write_atomic(done, report.to_json().encode())
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
        while not ray.wait([ref], timeout=POLL_S)[0]:
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
            done = holds(part, seen, opts)
            if done is not None:
                finalised += tally(report, done, manifest)
                report.parts_resumed += 1
                tick()
                continue
            # Built before an earlier part existed (that unit had failed): rebuild it.
            seen = reseed(out, report.parts, opts)
            part.unlink(missing_ok=True)
            sched.submit(unit)
        result = sched.result(unit.k, tick)
        running.pop(unit.k, None)
        if result.pid:
            key = str(result.pid)
            report.worker_peak_rss_mb[key] = max(report.worker_peak_rss_mb.get(key, 0.0),
                                                 round(result.peak_rss_mb, 1))
        report.notes += [n for n in result.notes if n not in report.notes]
        if result.error:
            report.errors[unit.source] = join_errors(report.errors.get(unit.source), result.error)
            continue
        finalise(Path(result.pending), part, seen, opts)
        Path(result.pending).unlink(missing_ok=True)
        pages = tally(report, read_dataset(part), manifest)
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

