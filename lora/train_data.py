"""The training data: images placed in aspect-ratio buckets, captions, the batch order, caches.

Each image goes to its nearest SDXL bucket (:mod:`buckets`, shared with the archive's
``--resize bucket``), is resized to cover it and center-cropped by what is left over:
a few percent at 1024. An image the archive wrote at a bucket size is not resized or
cropped at all. ``--no-buckets`` puts every image in one ``resolution`` square bucket,
which is exactly the old center crop. An image that would lose more than
:data:`MAX_CROP` of itself (a 9:1 printer's rule: beyond SDXL's 1:4 to 4:1) is left out
and listed, never cut in half.

A batch holds one bucket. The order of an epoch depends on (seed, epoch) only, and a
caption's dropout and tag shuffle on (seed, micro-batch, position) only, so a resumed run
sees exactly what an unbroken one would.
"""

from __future__ import annotations

import io
import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import count, islice
from pathlib import Path
from typing import Any

from buckets import bucket_sizes, cover_crop, nearest_bucket

from .dataset_zip import Example, read_dataset_zip

MAX_CROP = 1 / 3  # the most of an image a bucket may cut away; worst in range at 1024: 7 %

Size = tuple[int, int]  # (width, height)


# --- images in buckets ------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One image, placed: where it goes and how it is cut to get there."""

    example: Example
    original: Size  # as stored in the zip
    bucket: Size
    resized: Size  # covers the bucket
    crop: tuple[int, int]  # (left, top) of the bucket in the resized image

    @property
    def time_ids(self) -> list[int]:
        """SDXL's micro-conditioning: original (h, w), crop (top, left), target (h, w)."""
        (w, h), (left, top), (bw, bh) = self.original, self.crop, self.bucket
        return [h, w, top, left, bh, bw]

    @property
    def cut(self) -> float:
        """The share of the image the crop cuts away."""
        return 1 - (self.bucket[0] * self.bucket[1]) / (self.resized[0] * self.resized[1])


def image_size(data: bytes) -> Size:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        return im.size


def place(example: Example, resolution: int, buckets: bool = True) -> Sample:
    w, h = image_size(example.data)
    bucket = nearest_bucket(w, h, resolution) if buckets else (resolution, resolution)
    resized, crop = cover_crop(w, h, bucket)
    return Sample(example, (w, h), bucket, resized, crop)


def too_far(sample: Sample, resolution: int) -> bool:
    """Beyond the bucket set's 1:4 / 4:1, so far that its bucket would cut off over
    :data:`MAX_CROP` of it (an image within the range is always kept)."""
    sizes = bucket_sizes(resolution)
    w, h = sample.original
    inside = sizes[0][0] / sizes[0][1] <= w / h <= sizes[-1][0] / sizes[-1][1]
    return not inside and sample.cut > MAX_CROP


def prepare_image(sample: Sample) -> Any:
    """Pixels in [-1, 1], 3 x H x W of the bucket, cut exactly as ``sample.time_ids`` say."""
    import numpy as np
    import torch
    from PIL import Image

    (left, top), (bw, bh) = sample.crop, sample.bucket
    with Image.open(io.BytesIO(sample.example.data)) as im:
        im = im.convert("RGB")
        im = im.resize(sample.resized, Image.Resampling.BICUBIC)  # a copy when already there
        im = im.crop((left, top, left + bw, top + bh))
        arr = np.asarray(im, dtype=np.float32) / 127.5 - 1.0
    return torch.from_numpy(arr).permute(2, 0, 1).contiguous()


# --- the datasets -----------------------------------------------------------------------------


@dataclass
class Part:
    """One zip of the union."""

    name: str
    images: int
    repeats: int
    summary: str
    caption_kinds: Counter = field(default_factory=Counter)  # "printed text", "model caption"


@dataclass
class TrainingSet:
    samples: list[Sample]  # each image once
    slots: list[int]  # an epoch: sample indices, each image ``repeats`` times
    parts: list[Part]
    left_out: list[str] = field(default_factory=list)  # too far from every bucket
    buckets: bool = True

    def slot_buckets(self) -> list[Size]:
        return [self.samples[i].bucket for i in self.slots]

    def histogram(self) -> list[tuple[Size, int, int]]:
        """(bucket, images, with repeats) per bucket, tallest first."""
        images = Counter(s.bucket for s in self.samples)
        seen = Counter(self.slot_buckets())
        return [(b, images[b], seen[b]) for b in sorted(images, key=lambda b: b[0] / b[1])]

    def summary(self) -> str:
        zips = "; ".join(
            f"{p.name}: {p.summary}" + (f", x{p.repeats} per epoch" if p.repeats > 1 else "")
            for p in self.parts
        )
        n = len(self.histogram())
        mode = (f"{n} aspect-ratio bucket{'s' if n > 1 else ''}" if self.buckets
                else "center crop to a square (--no-buckets)")  # fmt: skip
        out = f"{len(self.samples)} images, {len(self.slots)} per epoch, {mode}. {zips}"
        if self.left_out:
            out += (f". Left out {len(self.left_out)} beyond 1:4 / 4:1 (a bucket would cut "
                    f"over {MAX_CROP:.0%}): {', '.join(self.left_out[:5])}")  # fmt: skip
        return out


def load_training_set(
    datasets: list[str], resolution: int, buckets: bool = True, repeats: list[int] | None = None
) -> TrainingSet:
    """Read every zip (:class:`~lora.dataset_zip.UnsafeZip` before anything heavy) and place
    its images; raises ValueError when no image is left to train on."""
    samples: list[Sample] = []
    slots: list[int] = []
    parts: list[Part] = []
    left_out: list[str] = []
    for path, times in zip(datasets, repeats or [1] * len(datasets), strict=True):
        data = read_dataset_zip(path)
        kept, kinds = 0, Counter()
        for example in data.examples:
            sample = place(example, resolution, buckets)
            if buckets and too_far(sample, resolution):
                left_out.append(f"{Path(path).name}:{example.name}")
                continue
            slots.extend([len(samples)] * times)
            samples.append(sample)
            kept += 1
            kinds.update(example.kinds)
        parts.append(Part(Path(path).name, kept, times, data.summary(), kinds))
    if not samples:
        raise ValueError(
            f"no image to train on: all {len(left_out)} are too far beyond 1:4 / 4:1 for a bucket "
            f"({', '.join(left_out[:3])}); --no-buckets center-crops them instead"
        )
    return TrainingSet(samples, slots, parts, left_out, buckets)


# --- captions ---------------------------------------------------------------------------------


def caption_with_trigger(caption: str, trigger: str | None) -> str:
    if not trigger or trigger.lower() in caption.lower():
        return caption
    return f"{trigger}, {caption}" if caption else trigger


def shuffle_tags(caption: str, trigger: str | None, rng: random.Random) -> str:
    """kohya's ``--shuffle_caption`` with the trigger's tag kept first (``--keep_tokens``)."""
    tags = [t.strip() for t in caption.split(",") if t.strip()]
    lead = next((i for i, t in enumerate(tags) if trigger and trigger.lower() in t.lower()), None)
    first = [tags.pop(lead)] if lead is not None else []
    rng.shuffle(tags)
    return ", ".join(first + tags)


@dataclass(frozen=True)
class Captions:
    """The caption each slot trains with at a given micro-batch."""

    fixed: list[str]  # per sample, with the trigger
    trigger: str | None = None
    dropout: float = 0.0
    shuffle: bool = False
    seed: int = 0

    @classmethod
    def of(cls, data: TrainingSet, trigger: str | None, dropout: float = 0.0,
           shuffle: bool = False, seed: int = 0) -> Captions:  # fmt: skip
        fixed = [caption_with_trigger(s.example.caption, trigger) for s in data.samples]
        return cls(fixed, trigger, dropout, shuffle, seed)

    def distinct(self) -> list[str]:
        """Every caption a step can see, when the tags are not shuffled."""
        return sorted(set(self.fixed) | ({""} if self.dropout else set()))

    def for_batch(self, samples: list[int], micro_batch: int) -> list[str]:
        if not (self.dropout or self.shuffle):
            return [self.fixed[i] for i in samples]
        out = []
        for pos, i in enumerate(samples):
            rng = random.Random(f"captions:{self.seed}:{micro_batch}:{pos}")  # no shared RNG
            if self.dropout and rng.random() < self.dropout:
                out.append("")
            else:
                text = self.fixed[i]
                out.append(shuffle_tags(text, self.trigger, rng) if self.shuffle else text)
        return out


# --- the batch order --------------------------------------------------------------------------


def epoch_order(n: int, epoch: int, seed: int) -> list[int]:
    """The shuffle of one epoch depends on (seed, epoch) only, so a resume sees the same order."""
    import torch

    g = torch.Generator().manual_seed(seed * 100_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def epoch_batches(
    keys: list[Any], batch: int, epoch: int, seed: int, rank: int = 0, world: int = 1
) -> list[list[int]]:
    """One epoch's micro-batches of slot indices, each of one bucket (``keys[slot]``).

    The shuffled slots are dealt into per-bucket batches in order; a batch is placed where
    its first slot fell. With a single bucket this is the plain shuffled chunking.
    """
    batches: list[list[int]] = []
    filling: dict[Any, list[int]] = {}
    for slot in epoch_order(len(keys), epoch, seed)[rank::world]:
        current = filling.get(keys[slot])
        if current is None:
            current = filling[keys[slot]] = []
            batches.append(current)
        current.append(slot)
        if len(current) == batch:
            del filling[keys[slot]]
    return batches


def batches_per_epoch(keys: list[Any], batch: int, world: int = 1) -> int:
    """Micro-batches per epoch on each process (the same on all of them)."""
    per_bucket = sum(math.ceil(n / batch) for n in Counter(keys).values())
    return math.ceil(per_bucket / world)


def micro_batches(
    keys: list[Any], batch: int, start: int, seed: int, rank: int = 0, world: int = 1
) -> Iterator[list[int]]:
    """Slot indices per micro-batch, from micro-batch ``start`` on, forever."""
    every = (b for epoch in count() for b in epoch_batches(keys, batch, epoch, seed, rank, world))
    return islice(every, start, None)


# --- caches -----------------------------------------------------------------------------------


class LatentCache:
    """The VAE's latent distribution per image, in memory, each at its bucket's size."""

    def __init__(self, samples: list[Sample], encode: Callable[[Any], Any], keep: bool) -> None:
        self.samples, self.encode, self.keep = samples, encode, keep
        self.cached: dict[int, Any] = {}

    def __call__(self, i: int) -> Any:
        if i in self.cached:
            return self.cached[i]
        params = self.encode(prepare_image(self.samples[i]))
        if self.keep:
            self.cached[i] = params
        return params

    def stack(self, samples: list[int]) -> Any:
        """A batch of distributions; one bucket, so one shape."""
        import torch

        return torch.stack([self(i) for i in samples])

    def fill(self, progress: Callable[[Iterable[int]], Iterable[int]] = iter) -> Counter:
        """Encode every image once; returns the cached latents per bucket."""
        for i in progress(range(len(self.samples))):
            self(i)
        return Counter(self.samples[i].bucket for i in self.cached)


class TextCache:
    """Text embeddings per caption, encoded once; a shuffled caption is encoded when seen."""

    def __init__(self, encode: Callable[[str], tuple[Any, Any]], captions: Iterable[str]) -> None:
        self.encode = encode
        self.cached = {c: encode(c) for c in captions}

    def __call__(self, captions: list[str]) -> tuple[Any, Any]:
        import torch

        pairs = [self.cached.get(c) or self.encode(c) for c in captions]
        return torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs])
