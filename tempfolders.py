"""Result folders in the temp folder, and the sweep that removes the ones left unused.

Why one sweep: the archive tab's job folders and the vet tab's download folders are
both written per request and would otherwise stay on a server for good. Every request
sweeps before it writes, and two requests may sweep at once, so a folder that another
sweep removed meanwhile (or a dangling link) is passed over, never an error.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path


def last_use(folder: Path) -> float:
    """When a folder was last written: the folder itself or anything directly in it."""
    times = [folder.stat().st_mtime]
    for child in folder.iterdir():
        try:
            times.append(child.stat().st_mtime)
        except OSError:  # removed meanwhile
            pass
    return max(times)


def sweep(root: Path, prefix: str, keep_s: float, now: float | None = None) -> int:
    """Remove the folders under ``root`` named ``prefix``* unused for ``keep_s``; how many."""
    now = time.time() if now is None else now
    gone = 0
    for folder in root.glob(f"{prefix}*"):
        try:
            stale = folder.is_dir() and not folder.is_symlink() and now - last_use(folder) > keep_s
        except OSError:  # removed by another sweep meanwhile
            continue
        if stale:
            shutil.rmtree(folder, ignore_errors=True)
            gone += 1
    return gone
