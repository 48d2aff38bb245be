"""PDFs in, a dataset zip out: reader -> page filter -> resize -> writer.

Read top to bottom like a diffusers pipeline: ``iter_build`` opens each PDF,
streams its pages through ``process_page`` (one page in memory at a time),
and hands each outcome to the writer, yielding an event per page so a CLI
bar or a UI gallery can follow along. ``--workers N`` fans page ranges out to
processes (PyMuPDF is not thread-safe) and keeps the output order.
"""

from __future__ import annotations

import math
import multiprocessing
import re
import resource
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from archive.caption import DEFAULT_CAPTION, check_template, make_caption
from archive.errors import ArchiveError, BadPage
from archive.filter import FILTER_NAMES, PageFilter, make_filter
from archive.reader import open_pdf, read_page
from archive.resize import RESIZE_MODES, encode_jpeg, fit, needed_size, paper_colour
from archive.writer import DatasetWriter, PageRecord, manifest_csv

CHUNK = 4  # pages per worker task: amortises the IPC, and keeps the idle tail at the end short


@dataclass(frozen=True)
class Options:
    """Every knob of a run; the CLI flags map one to one."""

    filter: str = "default"
    threshold: float | None = None
    min_figure_area: float | None = None
    size: int = 1024
    resize: str = "pad"
    quality: int = 92
    pages: str | None = None
    workers: int = 1
    caption: str = DEFAULT_CAPTION
    trigger: str | None = None
    resume: bool = False
    password: str | None = None
    scan_only: bool = False
    scale: float = 2.0
    overwrite: bool = False
    thumbnails: bool = False
    max_pages: int | None = None  # a public Space caps a job; the CLI does not

    def check(self) -> Options:
        if self.filter not in FILTER_NAMES:
            raise ArchiveError(f"--filter must be one of {', '.join(FILTER_NAMES)}")
        if self.resize not in RESIZE_MODES:
            raise ArchiveError(f"--resize must be one of {', '.join(RESIZE_MODES)}")
        if not 16 <= self.size <= 4096:
            raise ArchiveError("--size must be between 16 and 4096 pixels")
        if not 1 <= self.quality <= 100:
            raise ArchiveError("--quality must be between 1 and 100")
        if not 1 <= self.workers <= 64:
            raise ArchiveError("--workers must be between 1 and 64")
        if not 0.1 <= self.scale <= 8:
            raise ArchiveError("render scale must be between 0.1 and 8")
        check_template(self.caption)
        if self.pages is not None:
            page_ranges(self.pages)
        return self


@dataclass
class PageEvent:
    """What happened to one page, and where the run stands."""

    record: PageRecord
    done: int
    total: int
    kept: int
    elapsed: float
    thumbnail: Image.Image | None = None

    @property
    def pages_per_s(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0


@dataclass
class Report:
    """The run's outcome: the CLI prints ``summary()``, the UI plots ``scores``."""

    out: Path
    pages: int
    kept: int
    bad: int
    seconds: float
    peak_rss_mb: float
    filter: str
    threshold: float
    scores: list[tuple[float, bool]] = field(default_factory=list)
    resumed: int = 0

    @property
    def pages_per_s(self) -> float:
        """Speed over the pages this run processed, not those carried over by a resume."""
        done = self.pages - self.resumed
        return done / self.seconds if self.seconds > 0 else 0.0

    @property
    def reduction(self) -> float:
        return 1 - self.kept / self.pages if self.pages else 0.0

    def summary(self) -> str:
        bad = f", {self.bad} bad page(s) skipped" if self.bad else ""
        resumed = f" ({self.resumed} carried over from the interrupted run)" if self.resumed else ""
        return (
            f"{self.pages} pages{resumed}, kept {self.kept} ({self.reduction:.0%} reduction){bad}; "
            f"{self.pages_per_s:.1f} pages/s, peak RSS {self.peak_rss_mb:.0f} MB -> {self.out}"
        )


def page_ranges(spec: str) -> list[tuple[int, int | None]]:
    """``"1-500,600,700-"`` to 1-based inclusive ranges; ``None`` means "to the end"."""
    ranges: list[tuple[int, int | None]] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        m = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if not m or not (m.group(1) or m.group(3)):
            raise ArchiveError(f"--pages: cannot read {part!r}; use e.g. 1-500,600,700-")
        lo = int(m.group(1) or 1)
        hi = int(m.group(3)) if m.group(3) else (None if m.group(2) else lo)
        if lo < 1 or (hi is not None and hi < lo):
            raise ArchiveError(f"--pages: {part!r} is not a valid range")
        ranges.append((lo, hi))
    if not ranges:
        raise ArchiveError("--pages is empty; use e.g. 1-500,600,700-")
    return ranges


def parse_pages(spec: str, count: int) -> list[int]:
    """Sorted 0-based page indices of ``spec`` within a ``count``-page PDF."""
    picked: set[int] = set()
    for lo, hi in page_ranges(spec):
        picked.update(range(lo - 1, min(count, hi if hi is not None else count)))
    return sorted(picked)


def source_names(paths: Iterable[Path]) -> list[str]:
    """Safe, unique names for zip entries, whatever the uploaded file was called."""
    names: list[str] = []
    for p in paths:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(p).stem).strip("._-")[:80] or "document"
        name, n = stem, 2
        while name in names:
            name, n = f"{stem}_{n}", n + 1
        names.append(name)
    return names


def process_page(
    doc, index: int, source: str, opts: Options, filt: PageFilter
) -> tuple[PageRecord, bytes | None, Image.Image | None]:
    """Read, judge and (if kept) resize and encode one page. Never raises for a bad page."""
    t0 = time.perf_counter()
    number = index + 1
    file_name = f"images/{source}_p{number:05d}.jpg"
    try:
        page = read_page(doc, index, opts.scale)
        verdict = filt.judge(page.preview)
        jpeg = thumb = None
        if verdict.kept and not opts.scan_only:
            paper = paper_colour(page.preview) if opts.resize == "pad" else None
            need = needed_size(page.width, page.height, opts.size, opts.resize)
            fitted = fit(page.full(need), opts.size, opts.resize, paper)
            jpeg = encode_jpeg(fitted, opts.quality)
            if opts.thumbnails:
                thumb = fitted.resize((192, 192), Image.Resampling.BILINEAR)
            del fitted
        record = PageRecord(
            source, number, verdict.kept, verdict.score, verdict.reason, page.width, page.height, 0
        )
    except (BadPage, OSError, ValueError, MemoryError) as bad:
        reason = str(bad) if isinstance(bad, BadPage) else f"bad page ({type(bad).__name__}: {bad})"
        record = PageRecord(source, number, False, math.nan, reason[:200], 0, 0, 0)
        jpeg = thumb = None
    record.ms = (time.perf_counter() - t0) * 1000
    if record.kept:
        record.file_name = file_name
        record.caption = make_caption(opts.caption, source, number, opts.trigger)
    return record, jpeg, thumb


_worker_doc: dict[str, object] = {}  # per worker process: its open PDF and its filter


def _chunk_worker(task: tuple[str, str, list[int], Options]) -> list[tuple]:
    """One worker process: open the PDF by path (once) and process a run of pages."""
    path, source, indices, opts = task
    if _worker_doc.get("path") != path:
        if "doc" in _worker_doc:
            _worker_doc["doc"].close()
        _worker_doc.update(path=path, doc=open_pdf(path, opts.password))
    key = (opts.filter, opts.threshold, opts.min_figure_area)
    if _worker_doc.get("filter_key") != key:  # --filter cnn loads a CNN: once per worker
        _worker_doc.update(filter_key=key, filter=make_filter(*key))
    filt = _worker_doc["filter"]
    return [process_page(_worker_doc["doc"], i, source, opts, filt) for i in indices]


def _outcomes(
    plan: list[tuple[Path, str, list[int]]], opts: Options, filt: PageFilter
) -> Generator[tuple, None, None]:
    """Every planned page's outcome, in order; owns the worker pool when there is one."""
    pool = _pool(opts.workers) if opts.workers > 1 else None
    try:
        for path, source, indices in plan:
            if pool is None:
                doc = open_pdf(path, opts.password)
                try:
                    for i in indices:
                        yield process_page(doc, i, source, opts, filt)
                finally:
                    doc.close()
                continue
            tasks = [(str(path), source, indices[k : k + CHUNK], opts)
                     for k in range(0, len(indices), CHUNK)]
            for results in pool.imap(_chunk_worker, tasks):
                yield from results
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def peak_rss_mb() -> float:
    """Peak RSS of this process and of its biggest worker, in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, kids) / 1024


def iter_build(
    paths: list[str | Path], out: str | Path, **options
) -> Generator[PageEvent, None, Report]:
    """Stream every page of ``paths`` into the dataset at ``out``; yields one event per page."""
    opts = Options(**options).check()
    pdfs = [Path(p) for p in paths]
    if not pdfs:
        raise ArchiveError("no input PDF given")
    sources = source_names(pdfs)
    plan: list[tuple[Path, str, list[int]]] = []
    for pdf, source in zip(pdfs, sources, strict=True):
        doc = open_pdf(pdf, opts.password)
        count = doc.page_count
        doc.close()
        indices = parse_pages(opts.pages, count) if opts.pages else list(range(count))
        plan.append((pdf, source, indices))
    pages_total = sum(len(idx) for _, _, idx in plan)
    if opts.max_pages is not None and pages_total > opts.max_pages:
        raise ArchiveError(
            f"{pages_total} pages is more than the {opts.max_pages} a job may have here "
            "(BORDE_MAX_PAGES); split it with --pages, or run `python -m archive` yourself"
        )
    filt = make_filter(opts.filter, opts.threshold, opts.min_figure_area)
    out = Path(out)
    if opts.scan_only:
        return (yield from _scan_only(plan, out, opts, filt))

    writer = DatasetWriter(out, resume=opts.resume, overwrite=opts.overwrite)
    done = writer.done()
    resumed = len(writer.records)
    plan = [(p, s, [i for i in idx if (s, i + 1) not in done]) for p, s, idx in plan]
    total = resumed + sum(len(idx) for _, _, idx in plan)
    kept = sum(r.kept for r in writer.records)
    n = resumed
    t0 = time.perf_counter()
    outcomes = _outcomes(plan, opts, filt)
    try:
        for record, jpeg, thumb in outcomes:
            writer.add(record, jpeg)
            n += 1
            kept += record.kept
            yield PageEvent(record, n, total, kept, time.perf_counter() - t0, thumb)
        final = writer.close()
    except BaseException:
        writer.abort()
        raise
    finally:
        outcomes.close()  # stops the workers now, not whenever the generator is collected
    return _report(final, writer.records, time.perf_counter() - t0, filt, resumed)


def _report(
    out: Path, records: list[PageRecord], seconds: float, filt: PageFilter, resumed: int
) -> Report:
    bad = sum(math.isnan(r.score) for r in records)
    scores = [(r.score, r.kept) for r in records if not math.isnan(r.score)]
    kept = sum(r.kept for r in records)
    return Report(
        out, len(records), kept, bad, seconds, peak_rss_mb(), filt.name, filt.threshold, scores,
        resumed,
    )


def _scan_only(
    plan: list[tuple[Path, str, list[int]]], out: Path, opts: Options, filt: PageFilter
) -> Generator[PageEvent, None, Report]:
    """Judge every page and write only the manifest, to choose a threshold."""
    target = out if out.suffix.lower() == ".csv" else out.with_suffix(".manifest.csv")
    if not target.parent.is_dir():
        raise ArchiveError(f"output folder {target.parent} does not exist")
    records: list[PageRecord] = []
    total = sum(len(idx) for _, _, idx in plan)
    kept = 0
    t0 = time.perf_counter()
    outcomes = _outcomes(plan, opts, filt)
    try:
        for record, _jpeg, _thumb in outcomes:
            records.append(record)
            kept += record.kept
            yield PageEvent(record, len(records), total, kept, time.perf_counter() - t0)
    finally:
        outcomes.close()
    try:
        target.write_bytes(manifest_csv(records))
    except OSError as exc:
        raise ArchiveError(f"cannot write {target}: {exc.strerror or exc}") from None
    return _report(target, records, time.perf_counter() - t0, filt, 0)


def _pool(workers: int):
    """Worker processes; forked when that is safe, spawned otherwise.

    A fork copies the imported modules for free, but forking a threaded process
    (the Gradio server) can deadlock in MuPDF or PIL locks, so then we spawn.
    """
    method = "fork" if threading.active_count() == 1 and sys.platform == "linux" else "spawn"
    return multiprocessing.get_context(method).Pool(workers)


def build_dataset(
    paths: list[str | Path],
    out: str | Path,
    progress: Callable[[PageEvent], None] | None = None,
    **options,
) -> Report:
    """Build the dataset zip; ``progress(event)`` is called after every page."""
    gen = iter_build(paths, out, **options)
    while True:
        try:
            event = next(gen)
        except StopIteration as stop:
            return stop.value
        if progress is not None:
            progress(event)
