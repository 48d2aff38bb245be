"""Errors a curator can act on, kept apart from bugs.

An ``ArchiveError`` carries a one-line English reason (``str(exc)``, what the CLI
prints before it exits 2) and, for every other reader, a reason **code** with the
fields its words need (``exc.code``, ``exc.fields``: a file's own name, never its
path). The packages never know the reader's language: the app puts the code into
words at its edge (``archive.ui.error_said``, from ``ui_strings/archive.json``).
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path

# Every reason an ArchiveError can give, with the fields its words use.
CODES: dict[str, tuple[str, ...]] = {
    "no_file": ("name",),
    "empty": ("name",),
    "not_pdf": ("name",),
    "corrupt": ("name",),
    "encrypted": ("name",),
    "wrong_password": ("name",),
    "no_pages": ("name",),
    "too_many_pages": ("pages", "max_pages"),
    "no_input": (),
    "bad_option": (),
    "caption_long": ("max",),
    "caption_malformed": (),
    "caption_field": ("field", "allowed"),
    "no_folder": (),
    "read_only": (),
    "exists": ("name",),
    "partial_left": ("name",),
    "disk_full": (),
    "workers_killed": ("page",),
    "write_failed": (),
    "decisions_unreadable": ("name",),
    "decisions_columns": ("name", "columns"),
    "decisions_value": ("name", "line", "value"),
    "decisions_numbers": ("name", "line"),
    "dataset_old": ("name",),
    "dataset_unreadable": ("name",),
    "not_stored": ("page", "index"),
    "same_name": (),
    "no_data_dir": (),
    "outside_data": ("name",),
    "not_in_data": ("name",),
    "cluster": (),  # the CLI's --ray; the app never runs on a cluster
    "parts_in_use": (),  # likewise: the folder of a collection's parts
    # a IIIF manifest by URL (archive.iiif): the address, then the answer
    "url_malformed": (),
    "url_scheme": ("scheme",),
    "url_private": ("host",),
    "url_unreachable": ("host",),
    "url_status": ("host", "status"),
    "url_too_big": ("host", "max_mb"),
    "manifest_unreadable": ("name",),
    "not_manifest": ("name",),
    "manifest_no_images": ("name",),
    "other": (),
}
# What went wrong when no ArchiveError says it: a bug, or memory.
CRASH_CODES: dict[str, tuple[str, ...]] = {"crash": (), "out_of_memory": ()}


class ArchiveError(Exception):
    """Bad input or a broken environment (disk full, read-only folder).

    ``ArchiveError(line, code="not_pdf", name="scan.pdf")``: ``line`` for the CLI and the
    log, ``code`` (one of :data:`CODES`; the app says "other" for one it has no words
    for) and its fields for the words of the app.
    """

    def __init__(self, message: str, code: str = "other", **fields: object) -> None:
        super().__init__(message)
        if "name" in fields:  # a file's own name, never where the server keeps it
            fields["name"] = Path(str(fields["name"])).name
        self.code, self.fields = code, fields


def reason_of(exc: BaseException) -> tuple[str, dict[str, object]]:
    """Any exception as a reason code and its fields (see :data:`CRASH_CODES`)."""
    if isinstance(exc, ArchiveError):
        return exc.code, dict(exc.fields)
    if isinstance(exc, MemoryError):
        return "out_of_memory", {}
    return "crash", {}


class BadPage(Exception):
    """One page cannot be used; the run goes on and the manifest says why."""
