"""The curator's keep/drop decisions, and how a build and ``archive.apply`` honour them.

A decision is keyed by (source, page, candidate index), the same key ``regions.csv``
gives every candidate, so it survives a re-run or a ``--resume`` on the same PDF:
the candidates are found again in the same order. Decisions live beside the
dataset, ``DATASET.decisions.csv``, which the build reads whenever it exists.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path

from archive.errors import ArchiveError
from archive.records import RegionRecord

Key = tuple[str, int, int]
CHOICES = ("keep", "drop")
DUPLICATE = "duplicate of "
COLUMNS = ["source", "page", "index", "decision"]


def sidecar(dataset: str | Path) -> Path:
    """``ds.zip`` -> ``ds.decisions.csv``, beside it."""
    dataset = Path(dataset)
    return dataset.with_name(dataset.stem + ".decisions.csv")


def auto_kept(region: RegionRecord) -> bool:
    """What the finder (or page filter) said before duplicates and the curator."""
    return region.reason == "" or region.reason.startswith(DUPLICATE)


def decide(region: RegionRecord, decisions: dict[Key, str] | None) -> RegionRecord:
    """Set the curator's decision, if any, on a freshly judged candidate."""
    choice = (decisions or {}).get((region.source, region.page, region.index), "")
    if choice:
        region.decision, region.kept = choice, choice == "keep"
    return region


def parse(text: str, origin: str = "decisions") -> dict[Key, str]:
    """Decisions from CSV text: a decisions file, or an edited ``regions.csv``.

    Rows whose ``decision`` is empty (or "auto") are the finder's call and are skipped.
    """
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")),
                            delimiter=_delimiter(text))
    missing = {"source", "page", "index", "decision"} - set(reader.fieldnames or [])
    if missing:
        raise ArchiveError(f"{origin}: no {', '.join(sorted(missing))} column; export it "
                           "from review.html or the tab", code="decisions_columns",
                           name=origin, columns=", ".join(sorted(missing)))
    out: dict[Key, str] = {}
    for n, row in enumerate(reader, 2):
        choice = (row["decision"] or "").strip().lower()
        if choice in ("", "auto"):
            continue
        if choice not in CHOICES:
            raise ArchiveError(f"{origin}, line {n}: decision must be keep, drop or empty, "
                               f"not {row['decision']!r}", code="decisions_value", name=origin,
                               line=n, value=repr(row["decision"]))
        try:
            out[(row["source"], int(row["page"]), int(row["index"]))] = choice
        except ValueError:
            raise ArchiveError(f"{origin}, line {n}: page and index must be numbers",
                               code="decisions_numbers", name=origin, line=n) from None
    return out


def _delimiter(text: str) -> str:
    """The header line's separator: a spreadsheet set to Spanish (or German, French...)
    saves its CSV with ";" because "," is its decimal mark; "\t" for a pasted table."""
    header = text.split("\n", 1)[0]
    return max((",", ";", "\t"), key=header.count)


def load(path: str | Path) -> dict[Key, str]:
    path = Path(path)
    try:
        return parse(path.read_text(encoding="utf-8-sig"), path.name)  # Excel's BOM
    except (OSError, UnicodeDecodeError) as exc:
        raise ArchiveError(f"cannot read decisions {path}: {exc}", code="decisions_unreadable",
                           name=path.name) from None


def save(path: str | Path, decisions: dict[Key, str]) -> Path:
    """Write atomically: a crash never leaves half a decisions file."""
    path = Path(path)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for (source, page, index), choice in sorted(decisions.items()):
        writer.writerow([source, page, index, choice])
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(buf.getvalue(), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ArchiveError(f"cannot write decisions {path}: {exc.strerror or exc}",
                           code="write_failed") from None
    return path
