"""The ZeroGPU model lifecycle as one reusable piece.

A model is loaded for the request that needs it, used under
``torch.inference_mode()`` and, by policy, released afterwards so that a
free Space does not sit on memory between visitors.

Thread safety (decided here, once for every package):

* ``release``: every request loads its own copy and nothing is shared, so
  concurrent requests need no lock. Memory is bounded by the caller's
  concurrency limit (the Gradio queue) times the model size.
* ``offload`` and ``keep``: one shared copy, guarded by a lock that is held
  for the whole request, so two requests never move the same model between
  devices at once.

CUDA is never touched at import time (ZeroGPU forbids it): ``torch`` itself is
imported lazily and the device is chosen per request.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

log = logging.getLogger("borde.ondemand")

POLICIES = ("release", "offload", "keep")
T = TypeVar("T")

# Text that marks an exception as "the GPU could not do it" rather than a bug.
_GPU_FAILURE_MARKERS = (
    "out of memory",
    "cuda error",
    "cuda driver",
    "no cuda gpu",
    "no nvidia driver",
    "found no nvidia",
    "torch not compiled with cuda",
    "gpu quota",
    "exceeded your gpu quota",
    "zerogpu",
    "gpu task aborted",
    "no gpu",
)


def rss_mb() -> float:
    """Resident memory of this process, read cheaply from /proc when we can."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import psutil

        return psutil.Process().memory_info().rss / 2**20


def trim_memory() -> None:
    """Give freed heap back to the OS; without it RSS never comes down on glibc."""
    gc.collect()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):
            pass


def cuda_available() -> bool:
    """True when a usable CUDA device is present. Only called inside a request."""
    if os.environ.get("BORDE_FORCE_CPU"):
        return False
    import torch

    try:
        return bool(torch.cuda.is_available())
    except Exception:  # a broken driver is "no GPU", not a crash
        return False


def pick_device(preferred: str | None = None) -> str:
    """CUDA when present, otherwise CPU; an explicit choice wins."""
    if preferred:
        return preferred
    return "cuda" if cuda_available() else "cpu"


def is_gpu_failure(exc: BaseException) -> bool:
    """Whether an exception means the GPU path failed (OOM, quota, no GPU)."""
    name = type(exc).__name__.lower()
    if "outofmemory" in name or "zerogpu" in name:
        return True
    text = str(exc).lower()
    return any(marker in text for marker in _GPU_FAILURE_MARKERS)


def _empty_cuda_cache() -> None:
    if "torch" not in sys.modules:
        return
    import torch

    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _move(model: Any, device: str) -> Any:
    to = getattr(model, "to", None)
    if callable(to):
        moved = to(device)
        return model if moved is None else moved
    return model


class _PeakSampler:
    """Samples RSS in the background so a request's peak is seen, not guessed."""

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, rss_mb())

    def __enter__(self) -> _PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb())


@dataclass
class RequestStats:
    """What one request cost; logged, and kept on the holder for the UI."""

    name: str
    device: str
    policy: str
    load_s: float = 0.0
    run_s: float = 0.0
    peak_rss_mb: float = 0.0
    rss_after_mb: float = 0.0
    peak_vram_mb: float | None = None
    cached: bool = False
    fallback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> str:
        vram = f", peak VRAM {self.peak_vram_mb:.0f} MB" if self.peak_vram_mb else ""
        how = "cached" if self.cached else f"load {self.load_s:.2f}s"
        return (
            f"{self.name} on {self.device}: {how}, run {self.run_s:.2f}s, "
            f"peak RSS {self.peak_rss_mb:.0f} MB{vram}"
        )


class OnDemand:
    """Hands out a model for one request, then releases, offloads or keeps it.

    ``load_fn(device)`` builds the model (``from_pretrained`` and friends).
    Use it as::

        holder = OnDemand(load_model, policy="release", name="vet")
        with holder.use() as model:
            out = model(x)
    """

    def __init__(
        self,
        load_fn: Callable[[str], Any],
        policy: str = "release",
        name: str = "model",
        device: str | None = None,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, not {policy!r}")
        self.load_fn = load_fn
        self.policy = policy
        self.name = name
        self.device = device
        self._cached: Any = None
        self._lock = threading.RLock()
        self._local = threading.local()
        self.last_stats: RequestStats | None = None

    @property
    def loaded(self) -> bool:
        """Whether a copy stays resident between requests (never for release)."""
        return self._cached is not None

    @contextlib.contextmanager
    def use(self, device: str | None = None) -> Iterator[Any]:
        """The model on ``device`` for the duration of one request."""
        wait_for_warm_up()
        import torch

        dev = pick_device(device or self.device)
        if dev.startswith("cuda") and not cuda_available():
            raise RuntimeError(f"No CUDA GPU is available for {self.name}")
        stats = RequestStats(self.name, dev, self.policy)
        shared = self.policy != "release"
        lock = self._lock if shared else contextlib.nullcontext()
        with lock, _PeakSampler() as sampler:
            if dev.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter()
            model = self._acquire(dev, stats)
            stats.load_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            try:
                with torch.inference_mode():
                    yield model
            finally:
                stats.run_s = time.perf_counter() - t1
                if dev.startswith("cuda"):
                    stats.peak_vram_mb = torch.cuda.max_memory_allocated() / 2**20
                self._after(model, dev)
                del model
                trim_memory()
                _empty_cuda_cache()
        stats.peak_rss_mb = sampler.peak
        stats.rss_after_mb = rss_mb()
        self.last_stats = stats
        self._local.stats = stats
        log.info(stats.summary())

    @property
    def stats(self) -> RequestStats | None:
        """This thread's last request, so concurrent requests never mix figures."""
        return getattr(self._local, "stats", None)

    def _acquire(self, device: str, stats: RequestStats) -> Any:
        if self.policy == "release":
            return self._load(device)
        if self._cached is None:
            self._cached = self._load(device)
        else:
            stats.cached = True
            self._cached = _move(self._cached, device)
        return self._cached

    def _load(self, device: str) -> Any:
        try:
            model = self.load_fn(device)
            return _move(model, device)
        except BaseException:
            # A failed load leaves nothing half-built behind for the next request.
            trim_memory()
            _empty_cuda_cache()
            raise

    def _after(self, model: Any, device: str) -> None:
        if self.policy == "keep":
            return
        if self.policy == "offload":
            if device != "cpu":
                self._cached = _move(model, "cpu")
            return
        if device != "cpu":
            _move(model, "cpu")

    def release(self) -> None:
        """Drop a resident copy (offload/keep) now."""
        with self._lock:
            model, self._cached = self._cached, None
            if model is not None:
                _move(model, "cpu")
            del model
            trim_memory()
            _empty_cuda_cache()

    def run(self, fn: Callable[[Any], T], device: str | None = None) -> T:
        """``fn(model)`` on the best device, falling back to the CPU on a GPU failure."""
        dev = pick_device(device or self.device)
        if dev == "cpu":
            with self.use("cpu") as model:
                return fn(model)
        return with_cpu_fallback(
            lambda: self._run_on(fn, dev), lambda: self._run_on(fn, "cpu"), what=self.name
        )

    def _run_on(self, fn: Callable[[Any], T], device: str) -> T:
        with self.use(device) as model:
            return fn(model)


class FallbackNotice(str):
    """The message shown when a request ran on the CPU instead of the GPU."""


_notice = threading.local()


def last_fallback() -> str | None:
    """The CPU-fallback message of this thread's last request, if there was one."""
    return getattr(_notice, "message", None)


def with_cpu_fallback(
    gpu_call: Callable[[], T], cpu_call: Callable[[], T], what: str = "request"
) -> T:
    """Try the GPU path; on OOM, a spent quota or no GPU, answer from the CPU.

    Any other exception is a real error and propagates unchanged.
    """
    _notice.message = None
    try:
        return gpu_call()
    except Exception as exc:  # noqa: BLE001 - filtered right below
        if not is_gpu_failure(exc):
            raise
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
        message = FallbackNotice(
            f"GPU unavailable for {what} ({reason}); running on the CPU instead, which is slower."
        )
        log.warning(message)
        _notice.message = message
        trim_memory()
        with contextlib.suppress(Exception):
            _empty_cuda_cache()
        return cpu_call()


def zero_gpu_enabled() -> bool:
    """ZeroGPU is on only when the Space runtime says so."""
    return os.environ.get("SPACES_ZERO_GPU", "").lower() in {"1", "true", "yes"}


def gpu(duration: int | Callable[..., int] = 60) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """``@spaces.GPU(duration=...)`` where ZeroGPU runs, a no-op everywhere else.

    ``duration`` may be a function of the handler's own arguments, so a long
    job asks for a long slot and a short one keeps its queue priority.
    """

    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        if not zero_gpu_enabled():
            return fn
        try:
            import spaces
        except ImportError:
            log.warning("SPACES_ZERO_GPU is set but the 'spaces' package is missing")
            return fn
        if callable(duration):

            @functools.wraps(fn)
            def _duration(*args: Any, **kwargs: Any) -> int:
                return max(1, int(duration(*args, **kwargs)))

            return spaces.GPU(duration=_duration)(fn)
        return spaces.GPU(duration=int(duration))(fn)

    return decorate


# Set while no warm-up import runs. A lazily imported package (diffusers, transformers) that
# one thread is still initialising can look half-empty to another ("cannot import name"),
# so a request waits for the warm-up imports before it loads a model (not for the warm-up
# answer after them); the warm-up thread itself never waits.
_warm_done = threading.Event()
_warm_done.set()
_warm_thread: threading.Thread | None = None


def wait_for_warm_up(timeout: float = 300.0) -> None:
    if threading.current_thread() is not _warm_thread:
        _warm_done.wait(timeout)


def warm_imports(modules: list[str], then: Callable[[], Any] | None = None
                 ) -> threading.Thread:
    """Import heavy libraries in a background thread, so the first request does not pay.

    Only code is imported and CUDA is not touched; ``then`` may run one request nobody
    sees (on the CPU, released as any other), so the per-request policy above still
    holds. A failure is logged and skipped; the request that needs it reports it itself.
    """
    global _warm_thread

    def run() -> None:
        import importlib

        t0 = time.perf_counter()
        try:
            for name in modules:
                try:
                    importlib.import_module(name)
                except Exception as exc:  # noqa: BLE001 - warming must never crash the app
                    log.warning("warm-up import of %s failed: %s", name, exc)
        finally:
            _warm_done.set()  # the packages are whole now: requests need not wait for more
        log.info("warmed %d modules in %.1f s", len(modules), time.perf_counter() - t0)
        if then is not None:
            try:
                then()
            except Exception as exc:  # noqa: BLE001
                log.warning("warm-up request failed: %s", exc)

    _warm_done.clear()
    _warm_thread = threading.Thread(target=run, name="borde-warm-imports", daemon=True)
    _warm_thread.start()
    return _warm_thread
