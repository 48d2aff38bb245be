"""The server-path way in: how a 9 GB scan reaches a Space without a browser upload.

This is a security boundary on a public Space. Only PDFs inside one
allow-listed folder (``BORDE_DATA_DIR``, ``/data`` on Spaces) are offered, as
a list to pick from rather than free text, and every choice is resolved and
checked again, so ``..``, absolute paths and symlinks that lead out are refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from archive.errors import ArchiveError

MAX_LISTED = 500


def data_dir() -> Path | None:
    """The allow-listed folder, or None when it does not exist (the field is hidden)."""
    root = Path(os.environ.get("BORDE_DATA_DIR", "/data"))
    return root.resolve() if root.is_dir() else None


def list_pdfs(root: Path | None = None) -> list[str]:
    """PDFs under the folder, as paths relative to it, never following links out."""
    root = root if root is not None else data_dir()
    if root is None:
        return []
    root = root.resolve()
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.lower().endswith(".pdf"):
                continue
            try:
                found.append(str(resolve_choice(Path(dirpath, name).relative_to(root), root)
                                 .relative_to(root)))
            except ArchiveError:
                continue
            if len(found) >= MAX_LISTED:
                return found
    return found


def resolve_choice(choice: str | Path, root: Path | None = None) -> Path:
    """The real path of a listed PDF; anything that leaves the folder is refused."""
    root = root if root is not None else data_dir()
    if root is None:
        raise ArchiveError("no server data folder is configured (set BORDE_DATA_DIR)",
                           code="no_data_dir")
    root = root.resolve()
    rel = Path(str(choice))
    if rel.is_absolute() or ".." in rel.parts:
        raise ArchiveError(f"{choice}: only PDFs inside the data folder can be used",
                           code="outside_data", name=rel.name)
    real = (root / rel).resolve()
    if not real.is_relative_to(root):
        raise ArchiveError(f"{choice}: the link leads outside the data folder",
                           code="outside_data", name=rel.name)
    if not real.is_file() or real.suffix.lower() != ".pdf":
        raise ArchiveError(f"{choice}: not a PDF in the data folder", code="not_in_data",
                           name=rel.name)
    return real
