"""lora.train on a real, tiny filesystem: a full disk is a clear message, then --resume."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import archive
from tests.pdf_factory import labelled_pages, scans_pdf
from tests.tiny_models import build_sdxl

ROOT = Path(__file__).resolve().parents[1]


def _train(zip_path: Path, out: Path, base: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "lora.train", str(zip_path), "-o", str(out), "--base", str(base),
           "--resolution", "64", "--rank", "4", "--checkpoint-every", "2", *extra]
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def _size(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def test_full_disk_during_checkpoint_then_resume(shared_data, tmp_path):
    base = build_sdxl(tmp_path / "sdxl")
    pages = [p for p, _ in labelled_pages(shared_data) if "/DRAW/" in str(p)][:3]
    zip_path = tmp_path / "ds.zip"
    archive.build_dataset([scans_pdf(tmp_path / "p.pdf", pages)], zip_path, size=64,
                          unit="page", filter="std", threshold=0, keep_duplicates=True)
    probe = tmp_path / "probe"
    assert _train(zip_path, probe, base, "--max-steps", "2").returncode == 0
    one_checkpoint = _size(probe / "checkpoints")

    disk = tmp_path / "disk"
    disk.mkdir()
    size_kb = (one_checkpoint * 3 // 2) // 1024 + 64  # room for one checkpoint, not two
    if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        out = disk / "run"
        full = _train(zip_path, out, base, "--max-steps", "6")
        assert full.returncode != 0
        assert "Traceback" not in full.stderr
        assert "disk" in full.stderr.lower() and "full" in full.stderr.lower(), full.stderr[-800:]
        kept = out / "checkpoints" / "checkpoint-000002"
        assert {p.name for p in kept.iterdir()} >= {"optimizer.pt", "rng.pt", "state.json"}

        subprocess.run(["mount", "-o", f"remount,size={size_kb * 20}k", str(disk)], check=True)
        done = _train(zip_path, out, base, "--max-steps", "6", "--resume")
        assert done.returncode == 0, done.stderr[-800:]
        assert (out / "pytorch_lora_weights.safetensors").is_file()
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
