"""Near-duplicate photos across sources, by perceptual hash.

Web-scraped sets share photos: the same lumpy-skin cow sits in two repositories,
sometimes mirrored. Training and measuring across sources is honest only when
such copies are kept on one side of a split (``vet.train``) or dropped from a
measurement (``bench/vet_eval.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image

_N = 32
# Orthonormal DCT-II basis, so no scipy is needed for the hash.
_DCT = np.cos(np.pi * (2 * np.arange(_N)[None, :] + 1) * np.arange(_N)[:, None] / (2 * _N))
MAX_BITS = 8  # Hamming distance (of 64) at or below which two photos are the same photo


def _bits(gray: np.ndarray) -> np.ndarray:
    low = (_DCT @ gray @ _DCT.T)[:8, :8].ravel()
    return low > np.median(low[1:])


def phash(image: Image.Image | str | Path) -> tuple[int, int]:
    """The 64-bit DCT hash of a photo and of its mirror image."""
    img = image if isinstance(image, Image.Image) else Image.open(image)
    gray = np.asarray(img.convert("L").resize((_N, _N), Image.LANCZOS), dtype=np.float64)
    pack = [int(np.packbits(_bits(g)).view(">u8")[0]) for g in (gray, gray[:, ::-1])]
    return pack[0], pack[1]


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.unpackbits(x.view(np.uint8).reshape(*x.shape, 8), axis=-1).sum(-1)


def near_pairs(a: Iterable[tuple[int, int]], b: Iterable[tuple[int, int]],
               max_bits: int = MAX_BITS) -> list[tuple[int, int]]:
    """Index pairs (i in a, j in b) whose photos match, plain or mirrored."""
    ha = np.array([h for h, _ in a], dtype=np.uint64)
    hb = np.array(list(b), dtype=np.uint64).reshape(-1, 2)
    pairs: list[tuple[int, int]] = []
    for s in range(0, len(ha), 256):
        blk = ha[s: s + 256, None]
        d = np.minimum(_popcount(blk ^ hb[None, :, 0]), _popcount(blk ^ hb[None, :, 1]))
        pairs += [(s + int(i), int(j)) for i, j in np.argwhere(d <= max_bits)]
    return pairs
