"""Drop near-duplicate items across a whole job: bound volumes reprint plates.

A 64-bit perceptual hash (``imagehash.phash``'s) of each kept crop, compared by
Hamming distance against every item kept so far, in the job's own order, so the
first printing is kept and the decision is the same with any number of workers.

The hash is taken from the crop of the page preview (pHash looks at 32x32 pixels):
free, and the same at any scan resolution (a median 2 bits from the full-scale
crop's). Why 10 bits: on the shared Moreno chapbooks, the same woodcut printed in
different chapbooks (other paper, ink and crop) lies 6-10 bits apart (two pairs at
12 are missed: a kept reprint costs less than a lost plate, and the review shows
it); different woodcuts a median 30, and 1% of distinct pairs under 16.

The DCT is a 32x32 matrix product here rather than ``imagehash.phash``'s call into
``scipy.fftpack``: the same hashes (tests/test_archive_pipeline.py checks it), without
the 22 MB that importing scipy adds to every worker process.
"""

from __future__ import annotations

import imagehash
import numpy as np
from PIL import Image

MAX_DISTANCE = 10
_HASH_SIDE = 128  # phash looks at 32x32; shrinking a big image first keeps it cheap


def perceptual_hash(img: Image.Image) -> str:
    """The crop's 64-bit pHash as 16 hex digits: ``imagehash.phash``'s, bit for bit."""
    small = img.convert("L")
    factor = min(small.width, small.height) // _HASH_SIDE
    if factor >= 2:
        small = small.reduce(factor)
    side = _DCT.shape[0]
    pixels = np.asarray(small.resize((side, side), Image.Resampling.LANCZOS), dtype=np.float64)
    low = (_DCT @ pixels @ _DCT.T)[:8, :8]  # scipy's unnormalised DCT-II on both axes
    return str(imagehash.ImageHash(low > np.median(low)))


def _dct_matrix(n: int = 32) -> np.ndarray:
    """DCT-II as scipy.fftpack.dct computes it: 2 sum x[j] cos(pi k (2j + 1) / 2n)."""
    k, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return 2.0 * np.cos(np.pi * k * (2 * j + 1) / (2 * n))


_DCT = _dct_matrix()


def _popcount(x: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):  # numpy >= 2
        return np.bitwise_count(x)
    return np.unpackbits(x.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)


class Deduper:
    """The hashes of the items kept so far, and the file each one belongs to."""

    def __init__(self, max_distance: int = MAX_DISTANCE) -> None:
        self.max_distance = max_distance
        self._hashes = np.zeros(1024, dtype=np.uint64)
        self._files: list[str] = []

    def __len__(self) -> int:
        return len(self._files)

    def original_of(self, phash: str) -> str | None:
        """The kept file this hash nearly equals, or None if it is new."""
        if not self._files or not phash:
            return None
        dist = _popcount(self._hashes[: len(self._files)] ^ np.uint64(int(phash, 16)))
        best = int(np.argmin(dist))
        return self._files[best] if int(dist[best]) <= self.max_distance else None

    def add(self, phash: str, file_name: str) -> None:
        if not phash:
            return
        n = len(self._files)
        if n == len(self._hashes):
            self._hashes = np.concatenate([self._hashes, np.zeros_like(self._hashes)])
        self._hashes[n] = np.uint64(int(phash, 16))
        self._files.append(file_name)
