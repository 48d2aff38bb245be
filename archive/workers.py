"""The pool processes of ``--workers N``, and what happens when one of them is killed.

A ``multiprocessing.Pool`` whose worker is killed (the kernel's OOM killer on a small
Space, a user's ``kill``) starts a new worker and loses the task: the build then waits
forever for a chunk that never comes back. A ``ProcessPoolExecutor`` says so instead
(``BrokenProcessPool``), so the pool is started again and the chunks that were out are
handed out again; a pool that keeps breaking stops the build with a reason, and
``--resume`` carries over every page already done.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import cv2
import numpy as np

from archive.errors import ArchiveError

# Pools started again in one build before it stops: one killed worker is bad luck, four are
# a page or a machine that kills every worker (the chunk would only be killed again).
MAX_RESTARTS = 3

__all__ = ["BrokenProcessPool", "Workers"]


class Workers:
    """``size`` processes running ``work``; forked when ``fork`` (a process with no other
    thread: the CLI), spawned otherwise (forking a threaded Gradio server can deadlock in
    MuPDF or PIL locks), each spawned one set up by ``setup``."""

    def __init__(self, size: int, work: Callable, fork: bool, setup: Callable[[], None]):
        self.size, self.work, self.setup = size, work, setup
        self.restarts = 0
        self.executor = self._start(fork)

    def submit(self, task: tuple) -> Future:
        return self.executor.submit(self.work, task)

    def restart(self, first_page: int) -> None:
        """A new pool after one was broken; past ``MAX_RESTARTS``, the build stops."""
        self.close()
        self.restarts += 1
        if self.restarts > MAX_RESTARTS:
            raise ArchiveError(f"worker processes were killed {self.restarts} times, the last "
                               f"at page {first_page}; run again with --resume (and fewer "
                               "--workers if memory is short)", code="workers_killed",
                               page=first_page)
        self.executor = self._start(fork=False)  # this process now runs the pool's threads

    def close(self) -> None:
        """Stop every process at once: a build that ends early waits for none of them.
        (``_processes``: Python before 3.14 has no public way to terminate the workers.)"""
        processes = list((self.executor._processes or {}).values())
        self.executor.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            p.terminate()
        for p in processes:
            p.join()

    def _start(self, fork: bool) -> ProcessPoolExecutor:
        if not fork:
            return ProcessPoolExecutor(self.size, mp_context=multiprocessing.get_context(
                "spawn"), initializer=self.setup)
        # a forked child inherits OpenCV's thread count; changing it in the child hangs
        # (OpenCV 5 with a thread pool the parent already used: the workers test waited
        # forever). A forking executor starts all its processes at the first task: here.
        _warm_tables()
        before = cv2.getNumThreads()
        cv2.setNumThreads(1)
        try:
            executor = ProcessPoolExecutor(self.size,
                                           mp_context=multiprocessing.get_context("fork"))
            executor.submit(int).result()
            return executor
        finally:
            cv2.setNumThreads(before)


def _warm_tables() -> None:
    """Build OpenCV's Lab tables here, once, for every forked worker to inherit: its first
    RGB -> Lab conversion costs 110 ms of CPU, paid otherwise by each process."""
    cv2.cvtColor(np.zeros((1, 1, 3), np.uint8), cv2.COLOR_RGB2LAB)
