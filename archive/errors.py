"""Errors a curator can act on, kept apart from bugs.

An ``ArchiveError`` carries a one-line reason: the CLI prints it and exits 2,
the UI shows it. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class ArchiveError(Exception):
    """Bad input or a broken environment (disk full, read-only folder)."""


class BadPage(Exception):
    """One page cannot be used; the run goes on and the manifest says why."""
