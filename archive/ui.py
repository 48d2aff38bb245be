"""What the Archive tab shows, as plain data: no gradio here.

``run_job`` drives ``iter_build`` and turns its events into snapshots that
the app renders: the latest crops with their scores for the gallery, a status
line with the speed, and at the end the score histogram and the zip. A failure never loses the
pages done so far: the message points at the ``.partial`` and ``--resume``.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

from archive.errors import ArchiveError
from archive.pipeline import Report, iter_build, source_names
from archive.report import histogram_image

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
