"""SDXL aspect-ratio buckets, shared by the archive (``--resize bucket``) and the trainer.

One definition for both sides is the point: an image the archive wrote at a bucket
size lands in exactly that bucket when ``lora.train`` reads it, with no crop.
The set follows kohya's and SDXL's: both sides multiples of 64, an area of about
``resolution``² (the nearest multiple of 64 for the short side, so within a few
percent), and aspect ratios from 1:4 to 4:1.
"""

from __future__ import annotations

import math
from functools import lru_cache

STEP = 64
MAX_RATIO = 4.0


@lru_cache(maxsize=16)
def bucket_sizes(resolution: int = 1024, step: int = STEP, max_ratio: float = MAX_RATIO
                 ) -> tuple[tuple[int, int], ...]:
    """Every (width, height) bucket for ``resolution``, sorted from tallest to widest."""
    if resolution < step:
        raise ValueError(f"resolution must be at least {step}, not {resolution}")
    area = resolution * resolution
    sizes: set[tuple[int, int]] = set()
    width = step
    while width <= resolution * math.sqrt(max_ratio) + step:
        height = max(step, round(area / width / step) * step)
        ratio = width / height
        if 1 / max_ratio - 1e-9 <= ratio <= max_ratio + 1e-9:
            sizes.add((width, height))
            sizes.add((height, width))
        width += step
    return tuple(sorted(sizes, key=lambda s: (s[0] / s[1], s[0])))


def nearest_bucket(width: int, height: int, resolution: int = 1024) -> tuple[int, int]:
    """The bucket whose aspect ratio is closest to the image's (in log space).

    Ratios beyond 1:4 or 4:1 go to the extreme bucket; among buckets of equal
    ratio distance the one whose area is nearest ``resolution``² wins.
    """
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, not {width}x{height}")
    target = math.log(width / height)
    area = resolution * resolution
    return min(
        bucket_sizes(resolution),
        key=lambda s: (round(abs(math.log(s[0] / s[1]) - target), 9), abs(s[0] * s[1] - area)),
    )


def cover_crop(width: int, height: int, bucket: tuple[int, int]) -> tuple[tuple[int, int],
                                                                          tuple[int, int]]:
    """The resized size that covers ``bucket``, and the centred crop's top-left in it.

    SDXL's ``time_ids`` take the original size, this crop's top-left and the bucket.
    """
    bw, bh = bucket
    scale = max(bw / width, bh / height)
    rw, rh = max(bw, round(width * scale)), max(bh, round(height * scale))
    return (rw, rh), ((rw - bw) // 2, (rh - bh) // 2)
