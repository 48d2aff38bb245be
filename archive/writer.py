"""Write the dataset zip incrementally, so a crash or a kill loses (almost) nothing.

The zip is written as ``OUT.zip.partial`` and renamed only when complete.
Every few pages a small journal entry (the manifest rows since the last one)
is appended to the zip itself, so a resume needs no side file: it scans the
local headers of the ``.partial``, keeps everything up to the last whole
journal entry, truncates the rest and carries on. The journal entries are
left out of the final central directory, so the finished zip lists only the
dataset. Entries are stored (JPEGs do not compress) with a fixed timestamp,
so a resumed run gives the same entries and CRCs as an uninterrupted one.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import struct
import zipfile
import zlib
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from archive.errors import ArchiveError

MANIFEST_COLUMNS = ["source", "page", "kept", "score", "reason", "width", "height", "ms"]
JOURNAL_PREFIX = "_journal/"
JOURNAL_EVERY = 8
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_LOCAL = struct.Struct("<4s2B4HL2L2H")


@dataclass
class PageRecord:
    """One manifest row, plus what metadata.jsonl needs for a kept page."""

    source: str
    page: int
    kept: bool
    score: float
    reason: str
    width: int
    height: int
    ms: float
    file_name: str = ""
    caption: str = ""

    def manifest_row(self) -> list[str]:
        return [
            self.source,
            str(self.page),
            "1" if self.kept else "0",
            f"{self.score:.4f}",
            self.reason,
            str(self.width),
            str(self.height),
            f"{self.ms:.1f}",
        ]


def partial_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _info(name: str, size: int = 0) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16
    info.file_size = size
    return info


class DatasetWriter:
    """Append kept pages and manifest rows; ``close()`` makes the final zip."""

    def __init__(self, out: str | Path, resume: bool = False, overwrite: bool = False) -> None:
        self.out = Path(out)
        self.partial = partial_path(self.out)
        self.records: list[PageRecord] = []
        self._pending: list[PageRecord] = []
        self._journal_no = 0
        self._check_target(resume, overwrite)
        try:
            if resume and self.partial.exists():
                self._fp = open(self.partial, "r+b")  # noqa: SIM115 - owned by the writer
                self._zip = self._recover()
            else:
                self._fp = open(self.partial, "wb")  # noqa: SIM115
                self._zip = zipfile.ZipFile(self._fp, "w", zipfile.ZIP_STORED, allowZip64=True)
        except PermissionError:
            raise ArchiveError(f"cannot write {self.partial}: permission denied") from None
        except OSError as exc:
            raise _os_error(exc, self.partial) from None

    def _check_target(self, resume: bool, overwrite: bool) -> None:
        folder = self.out.parent
        if not folder.is_dir():
            raise ArchiveError(f"output folder {folder} does not exist")
        if not os.access(folder, os.W_OK):
            raise ArchiveError(f"output folder {folder} is read-only")
        if self.out.exists() and not overwrite:
            raise ArchiveError(f"{self.out} already exists; pick another name or remove it")
        if self.partial.exists() and not resume:
            raise ArchiveError(
                f"{self.partial} is left from an interrupted run: add --resume to continue it, "
                "or delete it to start over"
            )

    def done(self) -> set[tuple[str, int]]:
        """Pages already in the zip (after a resume), to be skipped."""
        return {(r.source, r.page) for r in self.records}

    def add(self, record: PageRecord, jpeg: bytes | None = None) -> None:
        """Write one page's outcome; a kept page brings its JPEG and caption."""
        try:
            if record.kept and jpeg is not None:
                self._zip.writestr(_info(record.file_name, len(jpeg)), jpeg)
                txt = record.file_name.rsplit(".", 1)[0] + ".txt"
                self._zip.writestr(_info(txt), record.caption.encode("utf-8"))
            self.records.append(record)
            self._pending.append(record)
            if len(self._pending) >= JOURNAL_EVERY:
                self.flush()
        except OSError as exc:
            raise _os_error(exc, self.partial) from None

    def flush(self) -> None:
        """Journal the rows written since the last journal entry."""
        if not self._pending:
            return
        self._journal_no += 1
        body = "".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in self._pending)
        name = f"{JOURNAL_PREFIX}{self._journal_no:06d}.jsonl"
        self._zip.writestr(_info(name), body.encode("utf-8"))
        self._fp.flush()
        self._pending = []

    def close(self) -> Path:
        """Write metadata.jsonl and manifest.csv, then rename to the final name."""
        try:
            self.flush()
            self._zip.writestr(_info("metadata.jsonl"), self._metadata())
            self._zip.writestr(_info("manifest.csv"), manifest_csv(self.records))
            keep = [i for i in self._zip.filelist if not i.filename.startswith(JOURNAL_PREFIX)]
            self._zip.filelist = keep
            self._zip.NameToInfo = {i.filename: i for i in keep}
            self._zip.close()
            self._fp.flush()
            os.fsync(self._fp.fileno())
            self._fp.close()
            os.replace(self.partial, self.out)
        except OSError as exc:
            raise _os_error(exc, self.partial) from None
        return self.out

    def abort(self) -> None:
        """Stop without finishing: journal what we can and leave the .partial for --resume."""
        try:
            self.flush()
            self._fp.flush()
        except OSError:
            pass  # recovery falls back to the last whole journal entry
        self._zip.fp = None  # never write a central directory over a half-done zip
        self._fp.close()

    def _metadata(self) -> bytes:
        rows = [
            {
                "file_name": r.file_name,
                "text": r.caption,
                "source": r.source,
                "page": r.page,
                "score": round(r.score, 4),
            }
            for r in self.records
            if r.kept
        ]
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")

    def _recover(self) -> zipfile.ZipFile:
        """Rebuild the zip state from the .partial's local headers."""
        entries, records, end = scan_partial(self._fp)
        self.records = records
        self._journal_no = sum(e.filename.startswith(JOURNAL_PREFIX) for e in entries)
        self._fp.seek(end)
        self._fp.truncate()
        zf = zipfile.ZipFile(self._fp, "w", zipfile.ZIP_STORED, allowZip64=True)
        for info in entries:
            zf.filelist.append(info)
            zf.NameToInfo[info.filename] = info
        return zf


def scan_partial(fp: io.BufferedIOBase) -> tuple[list[zipfile.ZipInfo], list[PageRecord], int]:
    """Entries and journalled records up to the last whole journal entry, and its end."""
    fp.seek(0)
    entries: list[zipfile.ZipInfo] = []
    records: list[PageRecord] = []
    good_entries: list[zipfile.ZipInfo] = []
    good_end = 0
    names = {f.name for f in fields(PageRecord)}
    while True:
        offset = fp.tell()
        head = fp.read(_LOCAL.size)
        if len(head) < _LOCAL.size:
            break
        sig, _v, _s, flags, method, _t, _d, crc, csize, size, nlen, elen = _LOCAL.unpack(head)
        if sig != b"PK\x03\x04" or method != zipfile.ZIP_STORED or csize != size:
            break
        raw_name = fp.read(nlen)
        fp.read(elen)
        data = fp.read(size)
        if len(raw_name) < nlen or len(data) < size or zlib.crc32(data) != crc:
            break
        name = raw_name.decode("utf-8" if flags & 0x800 else "cp437")
        info = _info(name, size)
        info.CRC, info.compress_size, info.header_offset = crc, size, offset
        info.flag_bits = flags
        entries.append(info)
        if name.startswith(JOURNAL_PREFIX):
            try:
                rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
                batch = [PageRecord(**{k: v for k, v in r.items() if k in names}) for r in rows]
            except (ValueError, TypeError):
                break
            if not batch:
                break
            records.extend(batch)
            good_entries = list(entries)
            good_end = fp.tell()
    return good_entries, records, good_end


def manifest_csv(records: list[PageRecord]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(MANIFEST_COLUMNS)
    for r in records:
        writer.writerow(r.manifest_row())
    return buf.getvalue().encode("utf-8")


def _os_error(exc: OSError, path: Path) -> ArchiveError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return ArchiveError(
            f"disk full while writing {path}; the pages done so far are kept there: "
            "free some space and run again with --resume"
        )
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ArchiveError(f"cannot write {path}: the folder is read-only")
    return ArchiveError(f"cannot write {path}: {exc.strerror or exc}")
