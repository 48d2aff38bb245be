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

import errno
import io
import json
import os
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

from archive.card import dataset_card
from archive.errors import ArchiveError
from archive.records import (
    PageRecord,
    RegionRecord,
    journal_line,
    manifest_csv,
    metadata_jsonl,
    parse_journal_line,
    regions_csv,
)

JOURNAL_PREFIX = "_journal/"
INFO_NAME = "build.json"
CARD_NAME = "README.md"  # the dataset card (archive.card)
JOURNAL_EVERY = 8
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_LOCAL = struct.Struct("<4s2B4HL2L2H")
Item = tuple[RegionRecord, "bytes | None"]  # a candidate and, when kept, its JPEG


def partial_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _info(name: str, size: int = 0) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16
    info.file_size = size
    return info


class DatasetWriter:
    """Append items and manifest rows; ``close()`` makes the final zip."""

    def __init__(self, out: str | Path, resume: bool = False, overwrite: bool = False,
                 info: dict | None = None) -> None:
        self.out = Path(out)
        self.info = info  # written as build.json: how the items were made, for apply
        self.partial = partial_path(self.out)
        self.pages: list[PageRecord] = []
        self.regions: list[RegionRecord] = []
        self._pending: list[tuple[PageRecord, list[RegionRecord]]] = []
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
            raise ArchiveError(f"cannot write {self.partial}: permission denied",
                               code="read_only") from None
        except OSError as exc:
            raise _os_error(exc, self.partial) from None

    def _check_target(self, resume: bool, overwrite: bool) -> None:
        folder = self.out.parent
        if not folder.is_dir():
            raise ArchiveError(f"output folder {folder} does not exist", code="no_folder")
        if not os.access(folder, os.W_OK):
            raise ArchiveError(f"output folder {folder} is read-only", code="read_only")
        if self.out.exists() and not overwrite:
            raise ArchiveError(f"{self.out} already exists; pick another name or remove it",
                               code="exists", name=self.out.name)
        if self.partial.exists() and not resume:
            raise ArchiveError(
                f"{self.partial} is left from an interrupted run: add --resume to continue it, "
                "or delete it to start over", code="partial_left", name=self.out.name
            )

    def done(self) -> set[tuple[str, int]]:
        """Pages already in the zip (after a resume), to be skipped."""
        return {(r.source, r.page) for r in self.pages}

    def forget(self, again: Callable[[PageRecord], bool]) -> None:
        """Pages to do again on a resume (a IIIF page whose image the network lost): left
        out of the manifest; the journal keeps them, and a later resume forgets them again."""
        self.pages = [r for r in self.pages if not again(r)]

    def add(self, page: PageRecord, items: list[Item]) -> None:
        """Write one page's outcome: its items' JPEGs and captions, and every candidate's row.

        Kept items go to ``images/``, doubtful ones kept for review to ``candidates/``
        (``metadata.jsonl`` lists only the former, so training never sees the latter).
        """
        try:
            for region, jpeg in items:
                if jpeg is not None and region.file_name:
                    self._zip.writestr(_info(region.file_name, len(jpeg)), jpeg)
                    txt = region.file_name.rsplit(".", 1)[0] + ".txt"
                    self._zip.writestr(_info(txt), region.caption.encode("utf-8"))
            regions = [region for region, _ in items]
            self.pages.append(page)
            self.regions.extend(regions)
            self._pending.append((page, regions))
            if len(self._pending) >= JOURNAL_EVERY:
                self.flush()
        except OSError as exc:
            raise _os_error(exc, self.partial) from None

    def flush(self) -> None:
        """Journal the rows written since the last journal entry."""
        if not self._pending:
            return
        self._journal_no += 1
        body = "".join(journal_line(page, regions) for page, regions in self._pending)
        name = f"{JOURNAL_PREFIX}{self._journal_no:06d}.jsonl"
        self._zip.writestr(_info(name), body.encode("utf-8"))
        self._fp.flush()
        self._pending = []

    def close(self) -> Path:
        """Write metadata.jsonl, manifest.csv and regions.csv, then rename to the final name."""
        try:
            self.flush()
            card = dataset_card(self.pages, self.regions).encode("utf-8")
            self._zip.writestr(_info(CARD_NAME), card)
            self._zip.writestr(_info("metadata.jsonl"), metadata_jsonl(self.regions))
            self._zip.writestr(_info("manifest.csv"), manifest_csv(self.pages))
            self._zip.writestr(_info("regions.csv"), regions_csv(self.regions))
            if self.info is not None:
                body = json.dumps(self.info, indent=1, sort_keys=True) + "\n"
                self._zip.writestr(_info(INFO_NAME), body.encode("utf-8"))
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
        try:
            self._fp.close()
        except OSError:
            pass  # a full disk fails the last flush; the file is closed all the same

    def _recover(self) -> zipfile.ZipFile:
        """Rebuild the zip state from the .partial's local headers."""
        entries, self.pages, self.regions, end = scan_partial(self._fp)
        self._journal_no = sum(e.filename.startswith(JOURNAL_PREFIX) for e in entries)
        self._fp.seek(end)
        self._fp.truncate()
        zf = zipfile.ZipFile(self._fp, "w", zipfile.ZIP_STORED, allowZip64=True)
        for info in entries:
            zf.filelist.append(info)
            zf.NameToInfo[info.filename] = info
        return zf


def scan_partial(
    fp: io.BufferedIOBase,
) -> tuple[list[zipfile.ZipInfo], list[PageRecord], list[RegionRecord], int]:
    """Entries and journalled records up to the last whole journal entry, and its end."""
    fp.seek(0)
    entries: list[zipfile.ZipInfo] = []
    pages: list[PageRecord] = []
    regions: list[RegionRecord] = []
    good_entries: list[zipfile.ZipInfo] = []
    good_end = 0
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
                batch = [parse_journal_line(line) for line in data.decode("utf-8").splitlines()]
            except (ValueError, TypeError, KeyError):
                break
            if not batch:
                break
            for page, page_regions in batch:
                pages.append(page)
                regions.extend(page_regions)
            good_entries = list(entries)
            good_end = fp.tell()
    return good_entries, pages, regions, good_end


def _os_error(exc: OSError, path: Path) -> ArchiveError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return ArchiveError(
            f"disk full while writing {path}; the pages done so far are kept there: "
            "free some space and run again with --resume", code="disk_full"
        )
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ArchiveError(f"cannot write {path}: the folder is read-only", code="read_only")
    return ArchiveError(f"cannot write {path}: {exc.strerror or exc}", code="write_failed")
