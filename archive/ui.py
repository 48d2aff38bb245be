"""What the Archive tab shows, as plain data: no gradio here.

``run_job`` drives ``iter_build`` and turns its events into snapshots that
the app renders: the latest crops with their scores for the gallery, one
progress line in words, and at the end the summary, the score histogram and
the zip. A failure never loses the pages done so far (the ``.partial`` stays
for ``--resume``; the log says where). Then the review: the doubtful crops
first, a click flips one, and ``rebuild`` writes the curated zip from the
build's own bytes and says what changed.

Words come from the caller's ``say(key, **values)`` (the app passes its
language), so reasons stay codes here and turn into words only at the edge.
"""

from __future__ import annotations

import html
import logging
import os
import shlex
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from PIL import Image, ImageOps

from archive import captioner
from archive.apply import apply, read_dataset
from archive.decisions import DUPLICATE, Key
from archive.decisions import load as load_decisions
from archive.errors import CODES, CRASH_CODES, ArchiveError, reason_of
from archive.iiif.book import THUMBS, BookPreview, is_url, preview_book
from archive.pipeline import Report, iter_build, source_names
from archive.records import CURATOR_REASONS, RegionRecord
from archive.report import histogram_image
from archive.review import by_doubt, thumbnail
from tempfolders import sweep
from ui_text import Said, Say, words

log = logging.getLogger("borde.archive")
GALLERY_SIZE = 24  # the browser shows the latest crops, not thousands
# The gallery's thumbnails are files, each written once: handed PIL images, gradio
# re-encodes every one into the same cache file at every update, in place, and a browser
# that fetches it mid-write keeps a broken image (two of five crops in one run of the tab,
# not reproduced on demand). A file is copied into gradio's cache once, atomically.
GALLERY_DIR = "gallery"
REVIEW_DIR = "review"  # the review's tiles: one file per crop and look (kept or dropped)
# Each build gets a job folder (its zip, gallery and review tiles); a server would keep them
# all, and a 10 GB scan's zip is GBs. A job folder unused for this long (its last write, a
# review's click or rebuild) is removed when the next build starts: a day leaves a review
# or a resumable failed build time, and bounds the disk by a day's builds.
JOB_PREFIX = "borde-archive-"
JOB_KEEP_S = float(os.environ.get("BORDE_JOB_KEEP_HOURS", "24")) * 3600
WEB_SCHEMES = ("http", "https")  # what archive.iiif.http fetches; any other is refused
# The finder's reason codes (archive/figures/finder.py) and the curator's, as ui_strings keys.
REASON_KEYS = {
    "rule": "archive_reason_rule", "too_small": "archive_reason_small",
    "page_edge": "archive_reason_edge", "text_block": "archive_reason_text",
    "lettering": "archive_reason_lettering", "ornament": "archive_reason_ornament",
    "initial": "archive_reason_initial", "faint": "archive_reason_faint",
    "stamp": "archive_reason_stamp", "outside_page": "archive_reason_outside_page",
    "chart": "archive_reason_chart",
    "below_threshold": "archive_reason_score",
    CURATOR_REASONS["keep"]: "archive_reason_curator_kept",
    CURATOR_REASONS["drop"]: "archive_reason_curator_dropped",
}
# Every reason code of an ArchiveError (archive/errors.py) and of a crash, as ui_strings keys.
ERROR_KEYS = {code: f"archive_error_{code}" for code in {**CODES, **CRASH_CODES}}


@dataclass
class Snapshot:
    gallery: list[tuple[str, str]] = field(default_factory=list)  # thumbnail file, caption
    status: str = ""  # one line in words (HTML): the progress, then the summary
    done: int = 0
    total: int = 0
    pages_per_s: float = 0.0
    report: Report | None = None
    histogram: Image.Image | None = None
    zip_path: Path | None = None
    error: str | None = None
    said: Said = field(default_factory=list)  # the summary or the error, to say again


def sweep_jobs(root: Path, keep_s: float = JOB_KEEP_S, now: float | None = None) -> int:
    """Remove the job folders under ``root`` unused for ``keep_s``; how many went."""
    return sweep(root, JOB_PREFIX, keep_s, now)


def build_gone(review: Review) -> bool:
    """Whether the build under review was removed (``sweep_jobs``); else it counts as used."""
    if not review.dataset.is_file():
        return True
    os.utime(review.dataset.parent)
    return False


def thumbnail_file(folder: Path, img: Image.Image) -> str:
    """The thumbnail as a new JPEG file in ``folder`` (never rewritten: see GALLERY_DIR)."""
    folder.mkdir(exist_ok=True)
    fd, name = tempfile.mkstemp(suffix=".jpg", dir=folder)
    with os.fdopen(fd, "wb") as fh:
        img.convert("RGB").save(fh, "JPEG", quality=85)
    return name


def forget_thumbnails(folder: Path, shown: set[str]) -> None:
    """Delete the thumbnails no longer shown: the folder holds GALLERY_SIZE at most."""
    for f in folder.glob("*.jpg"):
        if str(f) not in shown:
            f.unlink(missing_ok=True)


def reason_words(reason: str, say: Say) -> str:
    """A candidate's reason code in words; "" for a crop the finder kept."""
    if not reason:
        return ""
    if reason.startswith(DUPLICATE):
        return say("archive_reason_duplicate")
    key = REASON_KEYS.get(reason)
    return say(key) if key else reason


def said_words(r: RegionRecord, limit: int = 80) -> str:
    """The printed text and the model's caption, quoted, as the crop's caption ends."""
    return " · ".join(f"“{t[:limit]}”" for t in (r.printed_text, r.model_caption) if t)


def crop_caption(r: RegionRecord, say: Say) -> str:
    """The page, the score, why it is out if it is, and what is printed beside it."""
    why = reason_words(r.outcome_reason if not r.kept or r.decision else "", say)
    base = say("archive_crop_caption", page=r.page, index=r.index, score=f"{r.score:.2f}")
    return " · ".join(w for w in (base, why, said_words(r)) if w)


def progress_line(done: int, total: int, items: int, pages_per_s: float, say: Say,
                  starting: str = "archive_starting") -> str:
    """The one progress display: a bar and the same numbers in words (``starting``'s words
    before the first page)."""
    words = say("archive_progress", done=done, total=total, items=items,
                speed=f"{pages_per_s:.1f}") if total else say(starting)
    return (f'<div class="archive-progress"><progress value="{done}" max="{max(total, 1)}">'
            f'</progress> <span>{html.escape(words)}</span></div>')


def error_said(exc: BaseException, **fields: object) -> Said:
    """An exception as its reason code's key and fields (``fields`` win: the upload's own
    name); the English line and any path stay in the log."""
    code, found = reason_of(exc)
    key = ERROR_KEYS.get(code)
    if key is None:
        log.warning("no words for the archive error code %r: %s", code, exc)
        key, found = ERROR_KEYS["other"], {}
    return [(key, {**found, **fields})]


def summary_said(report: Report) -> Said:
    """The finished run: pages, figures, duplicates, time; no server paths."""
    key = "archive_done_figures" if report.unit == "figure" else "archive_done_pages"
    said: Said = [(key, dict(pages=report.pages, items=report.items, kept=report.kept,
                             duplicates=report.duplicates, seconds=f"{report.seconds:.1f}",
                             speed=f"{report.pages_per_s:.1f}"))]
    if report.bad:
        said.append(("archive_bad_pages", {"bad": report.bad}))
    return said


def histogram_words(unit: str, say: Say) -> dict[str, str]:
    keys = dict(title="archive_hist_title", x="archive_hist_x", kept="archive_hist_kept",
                dropped="archive_hist_dropped", threshold="archive_hist_threshold")
    words = {k: say(v) for k, v in keys.items()}
    words["y"] = say("archive_hist_y_regions" if unit == "figure" else "archive_hist_y_pages")
    return words


def job_folder(work_dir: Path | None = None) -> Path:
    """A fresh job folder, after the old ones are swept (``JOB_KEEP_S``)."""
    sweep_jobs(Path(work_dir or tempfile.gettempdir()))
    return Path(tempfile.mkdtemp(prefix=JOB_PREFIX, dir=work_dir))


def run_job(
    paths: list[str | Path], say: Say, work_dir: Path | None = None, every: int = 4,
    server_picker: bool = False, **options
) -> Iterator[Snapshot]:
    """Build a dataset from ``paths`` (PDF paths, and manifest addresses as ``str``: a
    ``Path`` would fold ``https://`` into ``https:/``) into a fresh folder, yielding
    snapshots as it goes."""
    if not paths:
        said = [("archive_no_pdf_server" if server_picker else "archive_no_pdf", {})]
        yield Snapshot(error=words(said, say), said=said)
        return
    folder = job_folder(work_dir)
    out = folder / f"{source_names(paths)[0]}_dataset.zip"
    # a manifest first (no PDF): the plan reads it, and a collection's books, before page 1
    starting = "archive_starting_manifest" if is_url(paths[0]) else "archive_starting"
    snap = Snapshot(status=progress_line(0, 0, 0, 0.0, say, starting))
    yield replace(snap)  # a copy each time: a consumer may keep them all
    gen = iter_build(paths, out, thumbnails=True, **options)
    try:
        while True:
            try:
                event = next(gen)
            except StopIteration as stop:
                report: Report = stop.value
                break
            if event.thumbnails:
                shown = [(thumbnail_file(folder / GALLERY_DIR, img), crop_caption(r, say))
                         for img, r in event.thumbnails]
                snap.gallery = (snap.gallery + shown)[-GALLERY_SIZE:]
                forget_thumbnails(folder / GALLERY_DIR, {f for f, _ in snap.gallery})
            snap.done, snap.total, snap.pages_per_s = event.done, event.total, event.pages_per_s
            snap.status = progress_line(event.done, event.total, event.items,
                                        event.pages_per_s, say)
            if event.done % every == 0 or event.thumbnails:
                yield replace(snap)
    except Exception as exc:  # noqa: BLE001 - the UI must say something, never hang
        if isinstance(exc, ArchiveError):
            log.warning("archive job stopped: %s", exc)
        else:
            log.exception("archive job failed")
        snap.said = [("archive_failed", {"detail": error_said(exc)})]
        snap.error = words(snap.said, say)
        _log_resume(paths, out)
        yield snap
        return
    snap.report = report
    snap.zip_path = report.out
    snap.said = [*summary_said(report), *report.notes]
    snap.status = words(snap.said, say)
    snap.histogram = histogram_image(report.scores, report.threshold,
                                     words=histogram_words(report.unit, say))
    yield snap


def caption_zip(path: Path, model: str = captioner.DEFAULT_MODEL) -> Said:
    """The model's captions written into the built zip; what to tell the curator."""
    report = captioner.caption_dataset(path, model)
    if report.error:
        log.warning("%s", report.error)
        return [("archive_captioner_failed", {"model": model})]
    if not report.captioned:
        return [("archive_captioner_none", {})]
    return [("archive_captioned", dict(count=report.captioned, model=model,
                                       device=report.device, seconds=f"{report.seconds:.1f}"))]


def _log_resume(paths: list[str | Path], out: Path) -> None:
    """The server's log, not the visitor's screen, gets the paths and the resume command."""
    partial = out.with_name(out.name + ".partial")
    if partial.exists():
        cmd = shlex.join(["python", "-m", "archive", *map(str, paths), "-o", str(out),
                          "--resume"])
        log.warning("the pages done so far are kept in %s; continue with: %s", partial, cmd)


# --- a IIIF manifest's book, looked at before it is built ---


def manifest_address(text: str | None) -> str | None:
    """The address typed in the manifest box, or None for an empty box. Only a web address:
    a file path typed on a public server would read the server's own files."""
    address = (text or "").strip()
    if not address:
        return None
    if not is_url(address):
        raise ArchiveError(f"{address[:120]!r} is not a web address", code="url_malformed")
    scheme = address.split(":", 1)[0].lower()
    if scheme not in WEB_SCHEMES:  # said before a job starts; the fetcher refuses it too
        raise ArchiveError(f"{scheme}: is not a web address", code="url_scheme", scheme=scheme)
    return address


def book_said(preview: BookPreview, max_pages: int | None = None) -> Said:
    """The book's title and pages (a collection's books too); more pages than a job may
    have is said now, not after the curator clicks Build."""
    if preview.books > 1:
        said: Said = [("archive_books", dict(title=preview.title, books=preview.books,
                                             pages=preview.pages))]
    else:
        said = [("archive_book", dict(title=preview.title, pages=preview.pages))]
    if max_pages is not None and preview.pages > max_pages:
        said.append(("archive_error_too_many_pages",
                     dict(pages=preview.pages, max_pages=max_pages)))
    return said


def look_at_book(text: str | None, work_dir: Path | None = None, count: int = THUMBS,
                 max_pages: int | None = None) -> tuple[Said, list[str]]:
    """What the tab shows of a manifest before the build: its words and its first pages as
    thumbnail files (see GALLERY_DIR). Raises ``ArchiveError`` for an address that cannot
    be read; ``([], [])`` for an empty box."""
    address = manifest_address(text)
    if address is None:
        return [], []
    preview = preview_book(address, count)
    folder = job_folder(work_dir) / GALLERY_DIR
    return book_said(preview, max_pages), [thumbnail_file(folder, img)
                                           for img in preview.thumbnails]


# --- the review: the curator keeps or drops crops, and the zip is rebuilt in seconds ---

REVIEW_SHOW = 48
KEPT_COLOUR, DROPPED_COLOUR = (60, 141, 60), (187, 51, 51)


@dataclass
class Review:
    """One curator's review of one build (kept in that browser session only)."""

    dataset: Path
    order: list[RegionRecord]  # the stored candidates, most doubtful first
    decisions: dict[Key, str] = field(default_factory=dict)
    shown: list[RegionRecord] = field(default_factory=list)
    thumbs: dict[Key, Image.Image] = field(default_factory=dict)
    items: int = 0  # what the build's zip holds, for "now N (was M)"
    tiles: dict[tuple[Key, bool], str] = field(default_factory=dict)  # each look's file, once

    def kept(self, r: RegionRecord) -> bool:
        choice = self.decisions.get(_key(r))
        return r.kept if choice is None else choice == "keep"


def _key(r: RegionRecord) -> Key:
    return (r.source, r.page, r.index)


def start_review(dataset: Path) -> Review:
    data = read_dataset(dataset)
    earlier = {_key(r): r.decision for r in data.regions if r.decision}
    return Review(Path(dataset), by_doubt(data.regions, data.threshold), earlier,
                  items=sum(r.kept for r in data.regions))


def review_gallery(review: Review, say: Say, limit: int = REVIEW_SHOW
                   ) -> list[tuple[str, str]]:
    """The most doubtful ``limit`` crops: kept ones framed green, dropped ones grey in red,
    as (file, caption); a click redraws only the crop it flipped (see GALLERY_DIR)."""
    review.shown = review.order[: max(1, int(limit))]
    missing = [r for r in review.shown if _key(r) not in review.thumbs]
    if missing:  # a click only re-frames; the zip is opened for new thumbnails alone
        with zipfile.ZipFile(review.dataset) as zf:
            for r in missing:
                review.thumbs[_key(r)] = thumbnail(zf.read(r.file_name))
    return [_tile(review, r, say) for r in review.shown]


def _tile(review: Review, r: RegionRecord, say: Say) -> tuple[str, str]:
    kept = review.kept(r)
    look = (_key(r), kept)
    if look not in review.tiles:
        img = review.thumbs[_key(r)]
        if not kept:
            img = ImageOps.grayscale(img).convert("RGB")
        framed = ImageOps.expand(img, border=6, fill=KEPT_COLOUR if kept else DROPPED_COLOUR)
        review.tiles[look] = thumbnail_file(review.dataset.parent / REVIEW_DIR, framed)
    words = [f"{r.score:.2f}", reason_words(r.reason, say),
             say("archive_tile_page", page=r.page, index=r.index), said_words(r)]
    return review.tiles[look], ("✓ " if kept else "✗ ") + " · ".join(w for w in words if w)


def toggle(review: Review, index: int) -> None:
    """Flip the crop at ``index`` of the gallery; back to the finder's call if it agrees."""
    r = review.shown[index]
    now = not review.kept(r)
    if now == r.kept and not r.decision:
        review.decisions.pop(_key(r), None)
    else:
        review.decisions[_key(r)] = "keep" if now else "drop"


def decisions_taken(review: Review, path: str | Path) -> Said:
    """Decisions made elsewhere (review.html's export, a regions.csv edited in a spreadsheet)
    join this review; a row for a crop this build does not hold is counted, never guessed at.
    A bad file raises ``ArchiveError`` and changes nothing."""
    choices = load_decisions(path)
    known = {_key(r) for r in review.order}
    taken = {k: c for k, c in choices.items() if k in known}
    review.decisions.update(taken)
    name = Path(path).name
    if not taken:
        return [("archive_decisions_none", {"name": name, "rows": len(choices)})]
    said: Said = [("archive_decisions_taken", {"name": name, "taken": len(taken)})]
    if len(choices) > len(taken):
        said.append(("archive_decisions_unknown", {"unknown": len(choices) - len(taken)}))
    return said


def take_decisions(review: Review, path: str | Path, say: Say) -> str:
    """``decisions_taken`` in words."""
    return words(decisions_taken(review, path), say)


def rebuilt(review: Review) -> tuple[Path, Said]:
    """Write the curated zip beside the build and say what changed; nothing is decoded again."""
    t0 = time.perf_counter()
    out = review.dataset.with_name(review.dataset.stem + "_curated.zip")
    path, items = apply(review.dataset, review.decisions, out, overwrite=True)
    added = sum(review.kept(r) and not r.kept for r in review.order)
    removed = sum(r.kept and not review.kept(r) for r in review.order)
    log.info("rebuilt %s in %.2f s", path, time.perf_counter() - t0)
    return path, [("archive_rebuilt", dict(name=path.name, added=added, removed=removed,
                                            items=items, before=review.items))]


def rebuild(review: Review, say: Say) -> tuple[Path, str]:
    """``rebuilt`` in words."""
    path, said = rebuilt(review)
    return path, words(said, say)
