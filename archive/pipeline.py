"""PDFs in, a dataset zip out: reader -> figures (or page filter) -> resize -> writer.

Read top to bottom like a diffusers pipeline: ``iter_build`` opens each PDF,
streams its pages through ``process_page`` (one page in memory at a time), and
hands each outcome to the writer, yielding an event per page so a CLI bar or a
UI gallery can follow along. The unit of the dataset is the illustration
(``unit="figure"``): ``figures.candidates`` finds the picture regions on the
page preview, and only a page with a kept region is decoded again, once, at the
resolution its crops need. ``unit="page"`` keeps whole pages by the page filter.
Near-duplicates are dropped in the job's order (``dedup``), in this process, so
``--workers N`` (processes over page ranges; PyMuPDF is not thread-safe) gives
the same bytes as one.
"""

from __future__ import annotations

import collections
import functools
import logging
import math
import re
import resource
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable
from concurrent import futures
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from archive import crop_edges, figures, ocr, printed_text, reader
from archive.caption import DEFAULT_CAPTION, check_template, make_caption
from archive.decisions import DUPLICATE, decide, sidecar
from archive.decisions import load as load_decisions
from archive.dedup import Deduper, perceptual_hash
from archive.errors import ArchiveError, BadPage
from archive.figures.extent import page_extent
from archive.filter import FILTER_NAMES, PageFilter, make_filter
from archive.iiif import book as iiif_book
from archive.reader import PREVIEW_SIDE, Page, open_document, read_page
from archive.records import (
    CANDIDATE_DIR,
    CURATOR_REASONS,
    KEPT_DIR,
    PageRecord,
    RegionRecord,
    item_name,
    manifest_csv,
    moved,
    regions_csv,
)
from archive.resize import (
    RESIZE_MODES,
    crop_array,
    crop_box,
    encode_jpeg,
    fit_array,
    needed_size,
    paper_colour,
    upright,
)
from archive.workers import BrokenProcessPool, Workers
from archive.writer import DatasetWriter

log = logging.getLogger("borde.archive")
CHUNK = 4  # pages per worker task: amortises the IPC, and keeps the idle tail at the end short
UNITS = ("figure", "page")
THUMB_SIDE = 192


@dataclass(frozen=True)
class Options:
    """Every knob of a run; the CLI flags map one to one."""

    unit: str = "figure"
    filter: str = "figures"
    threshold: float | None = None
    min_figure_area: float | None = None
    size: int = 1024
    resize: str | None = None  # None: "bucket" for figures, "pad" for whole pages
    quality: int = 92
    pages: str | None = None
    workers: int = 1
    caption: str = DEFAULT_CAPTION
    trigger: str | None = None
    keep_duplicates: bool = False
    candidates: bool = True  # keep doubtful crops in candidates/ for the curator's review
    decisions: dict | None = None  # (source, page, index) -> "keep" | "drop"
    resume: bool = False
    password: str | None = None
    scan_only: bool = False
    scale: float = 2.0
    overwrite: bool = False
    thumbnails: bool = False
    max_pages: int | None = None  # a public Space caps a job; the CLI does not
    printed_text: bool = True  # read the title or caption printed next to each figure
    ocr: str | None = None  # Tesseract language(s) for pages without a text layer

    def check(self) -> Options:
        if self.unit not in UNITS:
            raise ArchiveError(f"--unit must be one of {', '.join(UNITS)}", code="bad_option")
        if self.filter == "default":  # the name earlier versions documented
            return replace(self, filter="figures").check()
        if self.filter not in FILTER_NAMES:
            raise ArchiveError(f"--filter must be one of {', '.join(FILTER_NAMES)}",
                               code="bad_option")
        if self.unit == "figure" and self.filter != "figures":
            raise ArchiveError("--filter chooses the page filter of --unit page; figures are "
                               "judged by the figure finder (set --threshold to change it)",
                               code="bad_option")
        if self.resize is not None and self.resize not in RESIZE_MODES:
            raise ArchiveError(f"--resize must be one of {', '.join(RESIZE_MODES)}",
                               code="bad_option")
        if not 64 <= self.size <= 4096:
            raise ArchiveError("--size must be between 64 and 4096 pixels", code="bad_option")
        if not 1 <= self.quality <= 100:
            raise ArchiveError("--quality must be between 1 and 100", code="bad_option")
        if not 1 <= self.workers <= 64:
            raise ArchiveError("--workers must be between 1 and 64", code="bad_option")
        if not 0.1 <= self.scale <= 8:
            raise ArchiveError("render scale must be between 0.1 and 8", code="bad_option")
        if self.min_figure_area is not None and not 0 <= self.min_figure_area < 1:
            raise ArchiveError("--min-figure-area must be a share of the page, from 0 to 1",
                               code="bad_option")
        check_template(self.caption)
        if self.ocr is not None and not ocr.LANG.match(self.ocr):
            raise ArchiveError(f"--ocr {self.ocr!r} is not a Tesseract language code "
                               "(e.g. spa, eng, spa+eng)", code="bad_option")
        if self.pages is not None:
            page_ranges(self.pages)
        if self.resize is None:
            return replace(self, resize="bucket" if self.unit == "figure" else "pad")
        return self

    @property
    def preview_side(self) -> int:
        return max(PREVIEW_SIDE, figures.PREVIEW_SIDE) if self.unit == "figure" else PREVIEW_SIDE


@dataclass
class Item:
    """One candidate of a page on its way to the writer: its row and, if kept, its bytes."""

    region: RegionRecord
    jpeg: bytes | None = None
    thumbnail: Image.Image | None = None


@dataclass
class PageEvent:
    """What happened to one page, and where the run stands."""

    record: PageRecord
    done: int
    total: int
    kept: int  # pages that gave an item
    items: int  # dataset items so far
    elapsed: float
    thumbnails: list[tuple[Image.Image, RegionRecord]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # the job's warnings, on its first event

    @property
    def pages_per_s(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0


@dataclass
class Report:
    """The run's outcome: the CLI prints ``summary()``, the UI plots ``scores``."""

    out: Path
    unit: str
    pages: int
    kept: int  # pages that gave at least one item
    items: int
    duplicates: int
    bad: int
    seconds: float
    peak_rss_mb: float
    filter: str
    threshold: float
    scores: list[tuple[float, bool]] = field(default_factory=list)
    resumed: int = 0
    notes: list[str] = field(default_factory=list)  # warnings, e.g. no Tesseract for --ocr

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
        dups = f", {self.duplicates} duplicate(s) dropped" if self.duplicates else ""
        what = (f"{self.items} figure(s) from {self.kept} page(s)" if self.unit == "figure"
                else f"kept {self.kept} ({self.reduction:.0%} reduction)")
        return (
            f"{self.pages} pages{resumed}, {what}{dups}{bad}; "
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
            raise ArchiveError(f"--pages: cannot read {part!r}; use e.g. 1-500,600,700-",
                               code="bad_option")
        lo = int(m.group(1) or 1)
        hi = int(m.group(3)) if m.group(3) else (None if m.group(2) else lo)
        if lo < 1 or (hi is not None and hi < lo):
            raise ArchiveError(f"--pages: {part!r} is not a valid range", code="bad_option")
        ranges.append((lo, hi))
    if not ranges:
        raise ArchiveError("--pages is empty; use e.g. 1-500,600,700-", code="bad_option")
    return ranges


def parse_pages(spec: str, count: int) -> list[int]:
    """Sorted 0-based page indices of ``spec`` within a ``count``-page PDF."""
    picked: set[int] = set()
    for lo, hi in page_ranges(spec):
        picked.update(range(lo - 1, min(count, hi if hi is not None else count)))
    return sorted(picked)


def source_names(paths: Iterable[str | Path]) -> list[str]:
    """Safe, unique names for zip entries, whatever the uploaded file was called."""
    names: list[str] = []
    for p in paths:
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", iiif_book.source_stem(str(p)))
        stem = stem.strip("._-")[:80] or "document"
        name, n = stem, 2
        while name in names:
            name, n = f"{stem}_{n}", n + 1
        names.append(name)
    return names


def process_page(
    doc, index: int, source: str, opts: Options, filt: PageFilter | None
) -> tuple[PageRecord, list[Item]]:
    """Read, judge and (for kept or doubtful regions) cut and encode one page. Never raises."""
    t0 = time.perf_counter()
    number = index + 1
    try:
        page = read_page(doc, index, opts.scale, opts.preview_side)
        regions, note, extent, text_height = _candidates(page, opts, filt)
        items = [_item(source, number, k, r, opts, page.origin)
                 for k, r in enumerate(regions, 1)]
        floor = review_floor(opts)
        cut = [it for it in items if it.region.kept or it.region.score >= floor]
        wanted = any(it.region.kept for it in items) or (opts.candidates and cut)
        if wanted and not opts.scan_only:
            _cut(page, cut, opts, text_height)
        if wanted:
            _printed(page, cut, source, opts)
        score = max((r.score for r in regions), default=0.0)
        record = PageRecord(source, number, False, score, note, page.width, page.height, 0,
                            page_bbox=extent)
        settle_page(record, [it.region for it in items], opts.unit)
    except (BadPage, OSError, ValueError, MemoryError) as bad:
        reason = str(bad) if isinstance(bad, BadPage) else f"bad page ({type(bad).__name__}: {bad})"
        record = PageRecord(source, number, False, math.nan, reason[:200], 0, 0, 0)
        items = []
    record.ms = (time.perf_counter() - t0) * 1000
    return record, items


def review_floor(opts: Options) -> float:
    """Candidates scoring at least this are cut and kept for the curator's review.

    The floor is part of what decides a page's decode size, so it never depends on
    ``--no-candidates``: the same crops come out byte for byte either way.
    """
    if opts.unit == "figure":
        return figures.REVIEW_FLOOR
    return 0.5 * threshold_of(opts)[1]


def _candidates(page: Page, opts: Options, filt: PageFilter | None
                ) -> tuple[list[figures.Region], str, tuple[float, ...], float]:
    """The page's candidate regions (the figure finder's, or the whole page by the
    filter), the page filter's own words for the manifest, the page's extent and its
    text height (a fraction of the preview's long side; 0 for whole pages). A page
    small in its scan is read again from its scan (``figures.CLOSER``)."""
    preview = page.preview
    if opts.unit == "page":
        v = filt.judge(preview)
        return [figures.Region((0.0, 0.0, 1.0, 1.0), v.score, "page", v.kept,
                               "" if v.kept else v.reason)], v.reason, page_extent(preview), 0.0
    kwargs = {} if opts.min_figure_area is None else {"min_area": opts.min_figure_area}
    found = figures.find(preview, closer=reader.closer(page), **kwargs)
    regions = found.regions
    if opts.threshold is not None:
        regions = [_rethreshold(r, opts.threshold) for r in regions]
    return regions, "", found.page, found.text_height


def _rethreshold(region: figures.Region, threshold: float) -> figures.Region:
    """The curator's own threshold: every candidate scoring at least it is kept (never
    what lies outside the page, nor a stamp)."""
    if region.reason in figures.NEVER_KEPT:
        return region
    kept = region.score >= threshold
    reason = "" if kept else (region.reason or "below_threshold")
    return replace(region, kept=kept, reason=reason)


def _item(source: str, page: int, index: int, region: figures.Region, opts: Options,
          origin: dict) -> Item:
    """The region's row, named and captioned whether kept or not (a curator may keep it).
    ``origin``: what a IIIF manifest says of the book and the page (a PDF: nothing)."""
    name = item_name(source, page, index if opts.unit == "figure" else None)
    caption = make_caption(opts.caption, source, page, opts.trigger, origin=origin)
    row = RegionRecord(source, page, index, region.box, region.score, region.kind,
                       region.kept, region.reason, name, caption, turned=region.turned,
                       origin=dict(origin))
    return Item(decide(row, opts.decisions))


def settle_page(record: PageRecord, regions: list[RegionRecord], unit: str) -> PageRecord:
    """The page's figure count, kept flag and reason from its (decided) regions."""
    kept = [r for r in regions if r.kept]
    record.kept, record.figures = bool(kept), len(kept)
    if unit == "page":
        return record  # the page filter's own words stay
    if kept:
        record.reason = f"{len(kept)} figure(s)"
    else:
        why = sorted({r.reason or CURATOR_REASONS["drop"] for r in regions})
        record.reason = "no figure" + (f" ({'; '.join(why)[:150]})" if why else "")
    return record


def _cut(page: Page, items: list[Item], opts: Options, text_height: float) -> None:
    """Decode the page once, as large as its largest need, and make every item's bytes.
    A line of text glued on a crop's top or bottom is cut off it there, where the scan's
    resolution parts it from the picture (``crop_edges``), and its box says so."""
    boxes = [it.region.bbox for it in items]
    img = page.full_array(_decode_need(page, boxes, opts), boxes)
    paper = paper_colour(page.preview) if opts.resize == "pad" else None
    for it in items:
        if it.region.origin:  # a IIIF page: the URL these very pixels came from
            it.region.origin["image"] = page.image_of(it.region.bbox)
        whole = it.region.bbox == (0.0, 0.0, 1.0, 1.0)
        if not whole:
            box = crop_edges.trimmed(img, it.region.bbox, it.region.turned, text_height)
            it.region.bbox = tuple(round(v, 4) for v in box)
        crop = upright(img if whole else crop_array(img, it.region.bbox), it.region.turned)
        fitted = fit_array(crop, opts.size, opts.resize, paper)
        it.jpeg = encode_jpeg(fitted, opts.quality)
        # pHash looks at 32x32: the preview is plenty, and the same at any scan resolution
        small = page.preview if whole else crop_box(page.preview, it.region.bbox)
        it.region.phash = perceptual_hash(upright(small, it.region.turned))
        if opts.thumbnails:
            thumb = Image.fromarray(np.ascontiguousarray(fitted), "RGB")
            thumb.thumbnail((THUMB_SIDE, THUMB_SIDE), Image.Resampling.BILINEAR)
            it.thumbnail = thumb
        del fitted, crop
    del img


def _printed(page: Page, items: list[Item], source: str, opts: Options) -> None:
    """Each cut figure's printed title or caption, from the text layer or else from --ocr.

    Only pages with a kept or doubtful figure get here. OCR reads only the pages with
    a kept figure, for the kept figures alone. A picture on a page printed across the
    book is read with its page turned upright: its caption runs down the scan.
    """
    if opts.unit != "figure" or not opts.printed_text or not items:
        return
    words = [] if page.image_only else printed_text.text_layer_words(page.doc[page.index])
    lang = opts.ocr if not words and not opts.scan_only else None  # OCR: kept figures only
    for turned in sorted({it.region.turned for it in items}):
        group = [it for it in items
                 if it.region.turned == turned and (it.region.kept or not lang)]
        for it, text in zip(group, _printed_texts(page, group, words, turned, lang), strict=True):
            region = it.region
            region.printed_text = text
            region.caption = make_caption(opts.caption, source, region.page, opts.trigger, text,
                                          origin=region.origin)


def _printed_texts(page: Page, items: list[Item], words: list[printed_text.Word], turned: int,
                   lang: str | None) -> list[str]:
    """The printed text of each item's picture, read in the frame it stands upright in
    (``turned`` degrees clockwise from the page as shown: 0 or 90); with ``lang``, OCR's
    words of the page turned so."""
    boxes = [it.region.bbox for it in items]
    w, h = page.width, page.height
    if turned:
        boxes, words, (w, h) = ([printed_text.quarter_turned(b) for b in boxes],
                                printed_text.words_quarter_turned(words), (h, w))
    if lang and boxes:
        try:
            words = ocr.band_words(upright(page.full(), turned), boxes, lang)
        except (RuntimeError, OSError, ValueError):  # OCR never costs a page its figures
            words = []
    pixels = [(x0 * w, y0 * h, x1 * w, y1 * h) for x0, y0, x1, y1 in boxes]
    return printed_text.printed_texts(pixels, printed_text.scaled(words, w, h))


def _decode_need(page: Page, boxes: list[tuple[float, ...]], opts: Options) -> tuple[int, int]:
    """The page size at which every box still reaches its output size (never above full)."""
    scale = 0.0
    for x0, y0, x1, y1 in boxes:
        cw, ch = max(1.0, (x1 - x0) * page.width), max(1.0, (y1 - y0) * page.height)
        nw, nh = needed_size(math.ceil(cw), math.ceil(ch), opts.size, opts.resize)
        scale = max(scale, nw / cw, nh / ch)
    scale = min(1.0, scale)
    return max(1, math.ceil(page.width * scale)), max(1, math.ceil(page.height * scale))


def dedupe(record: PageRecord, items: list[Item], seen: Deduper, keep_duplicates: bool) -> int:
    """Drop the page's items that nearly equal one kept before; returns how many it dropped.

    An item the curator chose to keep stays, whatever it resembles; one the curator dropped
    takes its copies with it (the review shows them dropped, and a copy must not come back
    in the original's place).
    """
    dropped = 0
    for it in items:
        region = it.region
        if region.decision == "drop" and not keep_duplicates and region.phash:
            if seen.original_of(region.phash) is None:
                seen.add(region.phash, filed_name(region))
            continue
        if not region.kept or not region.phash:
            continue
        forced = keep_duplicates or region.decision == "keep"
        original = None if forced else seen.original_of(region.phash)
        if original is None:
            seen.add(region.phash, filed_name(region))
            continue
        region.kept, region.reason = False, f"{DUPLICATE}{original}"
        it.thumbnail = None
        dropped += 1
    if dropped:
        record.figures -= dropped
        record.kept = record.figures > 0
        if not record.kept:
            record.reason = "duplicate"
    return dropped


def filed_name(region: RegionRecord) -> str:
    """Where ``place`` files the region: images/ if kept, else candidates/. ``dedupe``
    asks it too: a replayed part still carries the folder its pending build chose,
    before the curator's decision moved it."""
    if not region.file_name:
        return ""
    return moved(region.file_name, KEPT_DIR if region.kept else CANDIDATE_DIR)


def place(items: list[Item], candidates: bool) -> None:
    """File each item where its bytes go: kept in images/, doubtful in candidates/."""
    for it in items:
        region = it.region
        if it.jpeg is not None and (region.kept or candidates):
            region.file_name = filed_name(region)
        else:
            region.file_name, it.jpeg = "", None


_worker_doc: dict[str, object] = {}  # per worker process: its open PDF and its filter


def _chunk_worker(task: tuple[str, str, list[int], Options]) -> list[tuple]:
    """One worker process: open the PDF by path (once) and process a run of pages."""
    path, source, indices, opts = task
    if _worker_doc.get("path") != path:
        if "doc" in _worker_doc:
            _worker_doc["doc"].close()
        _worker_doc.update(path=path, doc=open_document(path, opts.password))
    key = (opts.unit, opts.filter, opts.threshold, opts.min_figure_area)
    if _worker_doc.get("filter_key") != key:
        _worker_doc.update(filter_key=key, filter=_make_filter(opts))
    filt = _worker_doc["filter"]
    _ahead(_worker_doc["doc"], indices, opts)
    return [process_page(_worker_doc["doc"], i, source, opts, filt) for i in indices]


def _ahead(doc: object, indices: list[int], opts: Options) -> None:
    """Tell a book that fetches its pages (IIIF) which it reads next; a PDF reads its own."""
    if hasattr(doc, "ahead"):
        doc.ahead(indices, opts.preview_side)


def _make_filter(opts: Options) -> PageFilter | None:
    """The page filter, in page mode only: figure mode judges regions, not pages."""
    if opts.unit != "page":
        return None
    return make_filter(opts.filter, opts.threshold, opts.min_figure_area)


Plan = list[tuple[Path | str, str, list[int]]]  # a PDF's path or a manifest's address


def outcomes(plan: Plan, opts: Options) -> Generator[tuple[PageRecord, list[Item]], None, None]:
    """Every planned page's outcome, in order; owns the worker pool when there is one.

    ``--workers N`` is N processes in all: this one and N - 1 in a pool. This one
    works too, on a chunk of its own whenever the oldest chunk out in the pool is not
    back yet, so two workers are two processes, not three (an idle parent with all the
    imports cost 90 MB of RSS and left a core to share three ways).
    """
    fork = _fork_safe()  # asked once: the pool's own threads come next
    if fork:  # a process that only builds: its forked workers inherit this
        reader.heap_for_page_buffers()
    setup = functools.partial(_worker_setup, iiif_book.kept())
    pool = (Workers(opts.workers - 1, _chunk_worker, fork, setup=setup)
            if opts.workers > 1 else None)
    threads = _own_cv2_threads(pool, fork)
    filt = _make_filter(opts)
    docs = _OwnDocs(opts.password)
    try:
        for path, source, indices in plan:
            chunks = _chunks(indices, opts.workers)
            if pool is None:
                for chunk in chunks:
                    yield from _own_chunk(docs, path, source, chunk, opts, filt)
                continue
            yield from _shared(pool, opts.workers - 1, docs, path, source, chunks, opts, filt)
    finally:
        docs.close()
        if pool is not None:
            pool.close()
        if threads is not None:
            cv2.setNumThreads(threads)


AHEAD = 2  # chunks out in the pool per pool process: enough to keep it busy, no more
# Chunks waiting here for their turn, per pool process: this process's own, done ahead of
# the pool's oldest. A chunk with a plate in it takes three times one of text; with room
# for only two of its own (2 x AHEAD) this process sat waiting 0.6-0.9 s of a 7 s build.
HELD = 4 * AHEAD


def _chunks(indices: list[int], workers: int) -> list[list[int]]:
    """Runs of CHUNK pages, the last CHUNK pages a worker one page each.

    At the end of a PDF each process waits for the others' last chunks with nothing to
    do: up to AHEAD chunks of four pages (a quarter of a second a core on the bench);
    with single pages last, a page or two.
    """
    split = len(indices) if workers == 1 else max(0, len(indices) - CHUNK * workers)
    head = indices[:split]
    return ([head[k : k + CHUNK] for k in range(0, len(head), CHUNK)]
            + [[i] for i in indices[split:]])


def _shared(pool: Workers, size: int, docs: _OwnDocs, path: Path | str, source: str,
            chunks: list[list[int]], opts: Options, filt: PageFilter | None
            ) -> Generator[tuple, None, None]:
    """The chunks' outcomes in order, the pool's and this process's own interleaved.

    At most ``AHEAD`` chunks per pool process are out at a time, and this process takes
    a chunk only while the oldest one out is not back, so what waits here for its turn
    stays a few chunks (``HELD`` per pool process), whatever the PDF's length. A pool
    whose worker was killed is started again and the chunks out are handed out again.
    """
    queue: collections.deque = collections.deque()  # in page order: _Out or results
    k = 0
    while k < len(chunks) or queue:
        try:
            while (k < len(chunks)
                   and sum(not isinstance(q, list) for q in queue) < AHEAD * size):
                queue.append(_Out(chunks[k], pool.submit((str(path), source, chunks[k], opts))))
                k += 1
            head = queue[0]
            if isinstance(head, list):
                queue.popleft()
                yield from head
            elif head.future.done():
                done = head.future.result()
                queue.popleft()
                yield from done
            elif k < len(chunks) and len(queue) < HELD * size:
                queue.append(list(_own_chunk(docs, path, source, chunks[k], opts, filt)))
                k += 1
            else:
                futures.wait([head.future])
        except BrokenProcessPool:
            out = [q for q in queue if isinstance(q, _Out)]
            page = (out[0].chunk if out else chunks[k])[0] + 1
            _hand_out_again(pool, out, page, (str(path), source, opts))


def _hand_out_again(pool: Workers, out: list[_Out], page: int,
                    job: tuple[str, str, Options]) -> None:
    """A pool process was killed: a new pool, and the chunks that were out in it again.
    ``job``: the PDF's path, its source name and the options, as each task carries them."""
    path, source, opts = job
    while True:
        log.warning("a worker process was killed near page %d: starting the pool again", page)
        pool.restart(page)
        try:
            for o in out:
                o.future = pool.submit((path, source, o.chunk, opts))
            return
        except BrokenProcessPool:
            continue


@dataclass
class _Out:
    """A chunk out in the pool, with what is needed to hand it out again."""

    chunk: list[int]
    future: futures.Future


class _OwnDocs:
    """The PDF or IIIF book this process has open for its own chunks (one at a time)."""

    def __init__(self, password: str | None) -> None:
        self.password, self.path, self.doc = password, None, None

    def get(self, path: Path | str):
        if self.path != path:
            self.close()
            self.path, self.doc = path, open_document(path, self.password)
        return self.doc

    def close(self) -> None:
        if self.doc is not None:
            self.doc.close()
        self.path, self.doc = None, None


def _own_chunk(docs: _OwnDocs, path: Path | str, source: str, chunk: list[int], opts: Options,
               filt: PageFilter | None) -> Generator[tuple, None, None]:
    doc = docs.get(path)
    _ahead(doc, chunk, opts)
    for i in chunk:
        yield process_page(doc, i, source, opts, filt)


def own_peak_rss_mb() -> float:
    """This process's peak RSS: VmHWM, which, unlike ru_maxrss, a fork+exec does not inherit."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_rss_mb() -> float:
    """Peak RSS of this process and of its biggest worker, in MB."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return max(own_peak_rss_mb(), kids)


def make_plan(paths: list[str | Path], opts: Options, names: list[str] | None = None) -> Plan:
    """Each book with its safe name and the 0-based pages to process; checks the job cap.

    A book is a PDF (by path) or a IIIF manifest (by URL or ``.json`` file); a IIIF
    collection stands for each of its manifests. ``names`` overrides the source names,
    so a part of a collection built on its own (one Ray task) names its items as the
    whole collection's build would.
    """
    books = opened(paths, opts.password)
    if not books:
        raise ArchiveError("no input PDF given", code="no_input")
    names = source_names([a for a, _ in books]) if names is None else names
    plan: Plan = []
    for (address, doc), source in zip(books, names, strict=True):
        count = doc.page_count
        doc.close()
        indices = parse_pages(opts.pages, count) if opts.pages else list(range(count))
        plan.append((address, source, indices))
    pages_total = sum(len(idx) for _, _, idx in plan)
    if opts.max_pages is not None and pages_total > opts.max_pages:
        raise ArchiveError(
            f"{pages_total} pages is more than the {opts.max_pages} a job may have here "
            "(BORDE_MAX_PAGES); split it with --pages, or run `python -m archive` yourself",
            code="too_many_pages", pages=pages_total, max_pages=opts.max_pages,
        )
    return plan


def opened(paths: list[str | Path], password: str | None = None) -> list[tuple[str | Path, object]]:
    """Each input opened (a PDF by path, a manifest by address), a IIIF collection's
    manifests in its place; the plan needs their page counts."""
    books: list[tuple[str | Path, object]] = []
    for p in paths:
        if not iiif_book.is_iiif(p):
            books.append((Path(p), open_document(p, password)))
            continue
        books.extend((a, iiif_book.IIIFBook(a, b)) for a, b in iiif_book.books(str(p)))
    return books


def iter_build(
    paths: list[str | Path], out: str | Path, names: list[str] | None = None, **options
) -> Generator[PageEvent, None, Report]:
    """Stream every page of ``paths`` into the dataset at ``out``; yields one event per page.
    A manifest is fetched once a build, its workers included (``kept_documents``)."""
    with iiif_book.kept_documents():
        return (yield from _iter_build(paths, out, names, **options))


def _iter_build(paths: list[str | Path], out: str | Path, names: list[str] | None,
                **options) -> Generator[PageEvent, None, Report]:
    opts = Options(**options).check()
    plan = make_plan(paths, opts, names)
    notes = []
    if opts.ocr and (missing := ocr.problem(opts.ocr)):
        notes.append(missing)  # the build goes on, with no printed_text from OCR
        opts = replace(opts, ocr=None)
    out = Path(out)
    if opts.decisions is None and sidecar(out).exists():  # the curator's earlier choices stick
        opts = replace(opts, decisions=load_decisions(sidecar(out)))
    if opts.scan_only:
        return (yield from _scan_only(plan, out, opts))

    writer = DatasetWriter(out, resume=opts.resume, overwrite=opts.overwrite,
                           info=build_info(opts))
    if opts.resume:  # a IIIF page the network lost is fetched again
        writer.forget(lambda r: r.reason.startswith(iiif_book.NOT_FETCHED))
    done = writer.done()
    resumed = len(writer.pages)
    seen = Deduper()
    for region in writer.regions:
        if region.kept:
            seen.add(region.phash, region.file_name)
    plan = [(p, s, [i for i in idx if (s, i + 1) not in done]) for p, s, idx in plan]
    total = resumed + sum(len(idx) for _, _, idx in plan)
    kept = sum(r.kept for r in writer.pages)
    n_items = sum(r.kept for r in writer.regions)
    t0 = time.perf_counter()
    stream = outcomes(plan, opts)
    fresh = notes  # told once, on the first page's event
    try:
        for record, items in stream:
            dedupe(record, items, seen, opts.keep_duplicates)
            place(items, opts.candidates)
            writer.add(record, [(it.region, it.jpeg) for it in items])
            kept += record.kept
            n_items += record.figures
            yield PageEvent(record, len(writer.pages), total, kept, n_items,
                            time.perf_counter() - t0, _thumbnails(items), fresh)
            fresh = []
        final = writer.close()
    except BaseException:
        writer.abort()
        raise
    finally:
        stream.close()  # stops the workers now, not whenever the generator is collected
    report = _report(final, writer.pages, writer.regions, time.perf_counter() - t0, opts,
                     resumed)
    report.notes = notes
    return report


def build_info(opts: Options) -> dict:
    """What ``archive.apply`` and the review need to know of the build (``build.json``)."""
    name, threshold = threshold_of(opts)
    return {
        "version": 1, "unit": opts.unit, "judge": name, "threshold": threshold,
        "review_floor": review_floor(opts), "min_figure_area": opts.min_figure_area,
        "size": opts.size, "resize": opts.resize, "quality": opts.quality,
        "keep_duplicates": opts.keep_duplicates, "candidates": opts.candidates,
        "caption": opts.caption, "trigger": opts.trigger,
        "printed_text": opts.printed_text, "ocr": opts.ocr,
    }


def _thumbnails(items: list[Item]) -> list[tuple[Image.Image, RegionRecord]]:
    """The kept items' thumbnails with their rows; the UI writes the captions."""
    return [(it.thumbnail, it.region) for it in items
            if it.region.kept and it.thumbnail is not None]


def threshold_of(opts: Options) -> tuple[str, float]:
    """The name and threshold of what judged the run, for the summary and the histogram."""
    if opts.unit == "page":
        filt = make_filter(opts.filter, opts.threshold, opts.min_figure_area)
        return filt.name, filt.threshold
    return "figures", figures.THRESHOLD if opts.threshold is None else opts.threshold


def _report(out: Path, pages: list[PageRecord], regions: list[RegionRecord], seconds: float,
            opts: Options, resumed: int) -> Report:
    bad = sum(math.isnan(r.score) for r in pages)
    scores = [(r.score, r.kept) for r in regions if not math.isnan(r.score)]
    dups = sum(r.reason.startswith("duplicate of ") for r in regions)
    name, threshold = threshold_of(opts)
    return Report(
        out, opts.unit, len(pages), sum(r.kept for r in pages), sum(r.kept for r in regions),
        dups, bad, seconds, peak_rss_mb(), name, threshold, scores, resumed,
    )


def _scan_only(plan: Plan, out: Path, opts: Options) -> Generator[PageEvent, None, Report]:
    """Judge every page and write only the manifest and regions, to choose a threshold."""
    target = out if out.suffix.lower() == ".csv" else out.with_suffix(".manifest.csv")
    regions_target = target.with_name(target.stem + ".regions.csv")
    if not target.parent.is_dir():
        raise ArchiveError(f"output folder {target.parent} does not exist", code="no_folder")
    pages: list[PageRecord] = []
    regions: list[RegionRecord] = []
    total = sum(len(idx) for _, _, idx in plan)
    kept = n_items = 0
    t0 = time.perf_counter()
    stream = outcomes(plan, opts)
    try:
        for record, items in stream:
            pages.append(record)
            regions.extend(it.region for it in items)
            kept += record.kept
            n_items += record.figures
            yield PageEvent(record, len(pages), total, kept, n_items, time.perf_counter() - t0)
    finally:
        stream.close()
    try:
        target.write_bytes(manifest_csv(pages))
        regions_target.write_bytes(regions_csv(regions))
    except OSError as exc:
        raise ArchiveError(f"cannot write {target}: {exc.strerror or exc}",
                           code="write_failed") from None
    return _report(target, pages, regions, time.perf_counter() - t0, opts, 0)


def _fork_safe() -> bool:
    """This process runs no other thread (the CLI, not the Gradio server)."""
    return threading.active_count() == 1 and sys.platform == "linux"


def _own_cv2_threads(pool: Workers | None, fork: bool) -> int | None:
    """With a pool, this process is one worker of N: one OpenCV thread, as theirs.

    OpenCV's second thread in this process only contended with the pool's worker for
    the two cores (4% more CPU-s in figure mode). Returns the count to restore; only a
    process without other threads changes it (a server's other jobs share the setting).
    """
    if pool is None or not fork:
        return None
    before = cv2.getNumThreads()
    cv2.setNumThreads(1)
    return before


def _one_thread() -> None:
    """A worker process is one of N sharing the cores: OpenCV's own threads only contend."""
    cv2.setNumThreads(1)
    reader.heap_for_page_buffers()


def _worker_setup(documents: dict) -> None:
    """A spawned worker: one thread (``_one_thread``), and the manifests its build has
    read already, so it does not fetch them again (``iiif_book.keep``)."""
    _one_thread()
    iiif_book.keep(documents)


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
