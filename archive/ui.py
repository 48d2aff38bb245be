"""What the Archive tab shows, as plain data: no gradio here.

``run_job`` drives ``iter_build`` and turns its events into snapshots that
the app renders: the latest crops with their scores for the gallery, a status
line with the speed, and at the end the score histogram and the zip. A failure
never loses the pages done so far: the message points at the ``.partial`` and
``--resume``. Then the review: the doubtful crops first, a click flips one, and
``rebuild`` writes the curated zip from the build's own bytes.
"""

from __future__ import annotations

import shlex
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageOps

from archive.apply import apply, read_dataset
from archive.decisions import Key
from archive.errors import ArchiveError
from archive.figures import reason_words
from archive.pipeline import Report, iter_build, source_names
from archive.records import RegionRecord
from archive.report import histogram_image
from archive.review import by_doubt, thumbnail

GALLERY_SIZE = 24  # the browser shows the latest crops, not thousands


@dataclass
class Snapshot:
    gallery: list[tuple[Image.Image, str]] = field(default_factory=list)
    status: str = ""
    done: int = 0
    total: int = 0
    pages_per_s: float = 0.0
    report: Report | None = None
    histogram: Image.Image | None = None
    zip_path: Path | None = None
    error: str | None = None


def run_job(
    paths: list[Path], work_dir: Path | None = None, every: int = 4, **options
) -> Iterator[Snapshot]:
    """Build a dataset from ``paths`` into a fresh folder, yielding snapshots as it goes."""
    if not paths:
        yield Snapshot(error="Choose at least one PDF (upload it, or pick one on the server).")
        return
    folder = Path(tempfile.mkdtemp(prefix="borde-archive-", dir=work_dir))
    out = folder / f"{source_names(paths)[0]}_dataset.zip"
    snap = Snapshot()
    gen = iter_build(paths, out, thumbnails=True, **options)
    try:
        while True:
            try:
                event = next(gen)
            except StopIteration as stop:
                report: Report = stop.value
                break
            if event.thumbnails:
                snap.gallery = (snap.gallery + event.thumbnails)[-GALLERY_SIZE:]
            snap.done, snap.total, snap.pages_per_s = event.done, event.total, event.pages_per_s
            snap.status = (
                f"{event.done}/{event.total} pages, {event.items} item(s) from {event.kept} "
                f"page(s), {event.pages_per_s:.1f} pages/s"
            )
            if event.done % every == 0 or event.thumbnails:
                yield snap
    except ArchiveError as exc:
        snap.error = str(exc) + _resume_hint(paths, out)
        yield snap
        return
    except Exception as exc:  # noqa: BLE001 - the UI must say something, never hang
        snap.error = f"The job stopped: {type(exc).__name__}: {exc}." + _resume_hint(paths, out)
        yield snap
        return
    snap.report = report
    snap.zip_path = report.out
    snap.status = report.summary()
    title = "figure scores" if report.unit == "figure" else f"{report.filter} filter scores"
    snap.histogram = histogram_image(report.scores, report.threshold, title=title)
    yield snap


def _resume_hint(paths: list[Path], out: Path) -> str:
    partial = out.with_name(out.name + ".partial")
    if not partial.exists():
        return ""
    cmd = shlex.join(["python", "-m", "archive", *map(str, paths), "-o", str(out), "--resume"])
    return f" The pages done so far are kept in {partial}; continue with: {cmd}"


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

    def kept(self, r: RegionRecord) -> bool:
        choice = self.decisions.get(_key(r))
        return r.kept if choice is None else choice == "keep"


def _key(r: RegionRecord) -> Key:
    return (r.source, r.page, r.index)


def start_review(dataset: Path) -> Review:
    data = read_dataset(dataset)
    earlier = {_key(r): r.decision for r in data.regions if r.decision}
    return Review(Path(dataset), by_doubt(data.regions, data.threshold), earlier)


def review_gallery(review: Review, limit: int = REVIEW_SHOW) -> list[tuple[Image.Image, str]]:
    """The most doubtful ``limit`` crops: kept ones framed green, dropped ones grey in red."""
    review.shown = review.order[: max(1, int(limit))]
    missing = [r for r in review.shown if _key(r) not in review.thumbs]
    if missing:  # a click only re-frames; the zip is opened for new thumbnails alone
        with zipfile.ZipFile(review.dataset) as zf:
            for r in missing:
                review.thumbs[_key(r)] = thumbnail(zf.read(r.file_name))
    return [_tile(review, r) for r in review.shown]


def _tile(review: Review, r: RegionRecord) -> tuple[Image.Image, str]:
    img = review.thumbs[_key(r)]
    kept = review.kept(r)
    if not kept:
        img = ImageOps.grayscale(img).convert("RGB")
    framed = ImageOps.expand(img, border=6, fill=KEPT_COLOUR if kept else DROPPED_COLOUR)
    mark = "✓ keep" if kept else "✗ drop"
    why = f" · {reason_words(r.reason)}" if r.reason else ""
    return framed, f"{mark} · p.{r.page} #{r.index} · {r.score:.2f}{why}"


def toggle(review: Review, index: int) -> None:
    """Flip the crop at ``index`` of the gallery; back to the finder's call if it agrees."""
    r = review.shown[index]
    now = not review.kept(r)
    if now == r.kept and not r.decision:
        review.decisions.pop(_key(r), None)
    else:
        review.decisions[_key(r)] = "keep" if now else "drop"


def rebuild(review: Review) -> tuple[Path, str]:
    """Write the curated zip beside the build; nothing is decoded again."""
    t0 = time.perf_counter()
    out = review.dataset.with_name(review.dataset.stem + "_curated.zip")
    path, items = apply(review.dataset, review.decisions, out, overwrite=True)
    changed = len(review.decisions)
    return path, (f"Rebuilt {path.name}: {items} item(s), {changed} decision(s), "
                  f"in {time.perf_counter() - t0:.1f} s")
