"""The sweep of per-request result folders (archive jobs, vet downloads)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import tempfolders


def _folder(root: Path, name: str, age_s: float) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "result.csv").write_text("a,b\n")
    then = time.time() - age_s
    for p in (folder / "result.csv", folder):
        os.utime(p, (then, then))
    return folder


def test_only_stale_folders_of_the_prefix_go(tmp_path):
    old = _folder(tmp_path, "job-old", 7200)
    fresh = _folder(tmp_path, "job-fresh", 60)
    other = _folder(tmp_path, "mine-old", 7200)
    assert tempfolders.sweep(tmp_path, "job-", 3600) == 1
    assert not old.exists() and fresh.is_dir() and other.is_dir()


def test_a_file_written_lately_keeps_an_old_folder(tmp_path):
    folder = _folder(tmp_path, "job-reviewed", 7200)
    (folder / "decisions.csv").write_text("kept\n")  # a review click, just now
    assert tempfolders.sweep(tmp_path, "job-", 3600) == 0 and folder.is_dir()


def test_a_dangling_link_or_a_file_is_passed_over(tmp_path):
    """What another request's sweep leaves behind mid-way is no error for this one."""
    (tmp_path / "job-gone").symlink_to(tmp_path / "removed-meanwhile")
    (tmp_path / "job-file").write_text("x")
    old = _folder(tmp_path, "job-old", 7200)
    assert tempfolders.sweep(tmp_path, "job-", 3600) == 1
    assert not old.exists() and (tmp_path / "job-file").is_file()


def test_the_vet_downloads_sweep_their_old_folders(tmp_path, monkeypatch):
    """The herd's CSV and JSON go into a fresh folder; one older than the cache time goes,
    and a dangling link in the downloads folder no longer breaks the download."""
    from tabs import common as app

    monkeypatch.setattr(app.tempfile, "gettempdir", lambda: str(tmp_path))
    root = tmp_path / "borde-downloads"
    root.mkdir()
    old = _folder(root, "a" * 32, app.DELETE_CACHE[1] + 60)
    (root / ("b" * 32)).symlink_to(tmp_path / "nothing")
    paths = app.downloads({"herd.csv": "file,status\n", "herd.json": "[]"})
    assert [Path(p).name for p in paths] == ["herd.csv", "herd.json"]
    assert Path(paths[0]).read_text() == "file,status\n"
    assert not old.exists() and Path(paths[0]).parent.parent == root
