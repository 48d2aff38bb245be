"""Bring a kept page to the training size without distorting the engraving.

``pad`` (the default) keeps the whole page and fills the border with the
page's own paper colour, so the model does not learn black or white bars.
``crop`` fills the square and loses the margins; ``stretch`` distorts.
"""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image, ImageOps

RESIZE_MODES = ("pad", "crop", "stretch")


def paper_colour(img: Image.Image) -> tuple[int, int, int]:
    """The median colour of the page's outer margin: the paper, not the ink."""
    small = img.convert("RGB")
    small.thumbnail((128, 128))
    a = np.asarray(small)
    k = max(1, min(a.shape[0], a.shape[1]) // 20)
    strips = (a[:k], a[-k:], a[:, :k], a[:, -k:])
    border = np.concatenate([s.reshape(-1, 3) for s in strips])
    return tuple(int(v) for v in np.median(border, axis=0))


def needed_size(width: int, height: int, size: int = 1024, mode: str = "pad") -> tuple[int, int]:
    """The smallest source size ``fit`` can make its output from without upscaling.

    ``pad`` only needs the longer side to reach ``size``; ``crop`` and ``stretch``
    need the shorter one. The reader decodes no more than this.
    """
    if mode not in RESIZE_MODES:
        raise ValueError(f"resize mode must be one of {RESIZE_MODES}, not {mode!r}")
    side = max(width, height) if mode == "pad" else min(width, height)
    scale = min(1.0, size / max(side, 1))
    return max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale))


def fit(
    img: Image.Image,
    size: int = 1024,
    mode: str = "pad",
    paper: tuple[int, int, int] | None = None,
) -> Image.Image:
    """A ``size`` x ``size`` RGB image made with LANCZOS, by ``mode``.

    ``paper`` is the border colour for ``pad``; pass it when a small copy of the
    page is at hand (``paper_colour(preview)``), which is cheaper than the full page.
    """
    if mode not in RESIZE_MODES:
        raise ValueError(f"resize mode must be one of {RESIZE_MODES}, not {mode!r}")
    if img.mode != "RGB":
        img = img.convert("RGB")
    if mode == "stretch":
        return img.resize((size, size), Image.Resampling.LANCZOS)
    if mode == "crop":
        return ImageOps.fit(img, (size, size), Image.Resampling.LANCZOS)
    paper = paper or paper_colour(img)
    scale = size / max(img.width, img.height)
    w, h = max(1, round(img.width * scale)), max(1, round(img.height * scale))
    inner = img.resize((w, h), Image.Resampling.LANCZOS)
    canvas = Image.new("RGB", (size, size), paper)
    canvas.paste(inner, ((size - w) // 2, (size - h) // 2))
    return canvas


def encode_jpeg(img: Image.Image, quality: int = 92) -> bytes:
    """JPEG bytes; the same image always gives the same bytes, so resumes match."""
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality, optimize=False, progressive=False)
    return buf.getvalue()
