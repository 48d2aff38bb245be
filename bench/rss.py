"""Memory of a whole process tree: a server or a CLI with its worker processes."""

from __future__ import annotations

import psutil


def tree_rss_mb(proc: psutil.Process) -> float:
    """RSS of ``proc`` and all its children, in MB; 0 once it has gone."""
    try:
        tree = [proc, *proc.children(recursive=True)]
        return sum(p.memory_info().rss for p in tree) / 2**20
    except psutil.Error:
        return 0.0
