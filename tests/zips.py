"""Reading a built dataset zip back in tests: its regions.csv rows and keep/drop calls."""

from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path


def region_rows(path: str | Path) -> list[dict[str, str]]:
    """The rows of a dataset zip's ``regions.csv``."""
    with zipfile.ZipFile(path) as zf:
        return list(csv.DictReader(io.StringIO(zf.read("regions.csv").decode())))


def kept_by_key(path: str | Path) -> dict[str, bool]:
    """``"page#index"`` -> whether that candidate is kept."""
    return {f"{r['page']}#{r['index']}": r["kept"] == "1" for r in region_rows(path)}
