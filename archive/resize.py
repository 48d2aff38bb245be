"""Bring a kept figure or page to the training size without distorting the engraving.

``bucket`` (the default for figures) keeps the aspect ratio: the nearest SDXL
training bucket (sides multiples of 64, area about ``size``², 1:4 to 4:1), so a
tall fashion plate trains as a tall image, cropped by a few percent at most.
``pad`` (the default for whole pages) keeps everything and fills the border with
the page's own paper colour, so the model does not learn black or white bars.
``crop`` fills the square and loses the margins; ``stretch`` distorts.

Resampling: the reader already decoded the page at the DCT scale its crops need, so
what is left is a small step. An area average first brings a crop within 1.25 times
its output size (no aliasing), then a bicubic step makes the size: 2.7-4.7 times
faster than PIL's LANCZOS over the whole output, 34 dB PSNR against it on synthetic
hatching and a median 46 dB on real crops (``python bench/resize_quality.py``).
"""

from __future__ import annotations

import io
import math

import cv2
import numpy as np
from PIL import Image

from buckets import cover_crop, nearest_bucket

try:  # TurboJPEG straight from an array; PIL encodes where it is missing
    import simplejpeg
except ImportError:  # pragma: no cover - it is in requirements.txt
    simplejpeg = None

RESIZE_MODES = ("bucket", "pad", "crop", "stretch")


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
    need the shorter one; ``bucket`` the size that covers its bucket. The reader
    decodes no more than this.
    """
    if mode not in RESIZE_MODES:
        raise ValueError(f"resize mode must be one of {RESIZE_MODES}, not {mode!r}")
    if mode == "bucket":
        (cw, ch), _ = cover_crop(width, height, nearest_bucket(width, height, size))
        scale = min(1.0, cw / max(width, 1))
        return max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale))
    side = max(width, height) if mode == "pad" else min(width, height)
    scale = min(1.0, size / max(side, 1))
    return max(1, math.ceil(width * scale)), max(1, math.ceil(height * scale))


def fit(
    img: Image.Image,
    size: int = 1024,
    mode: str = "pad",
    paper: tuple[int, int, int] | None = None,
) -> Image.Image:
    """An RGB image by ``mode``: ``size`` square, or a bucket (see ``resample``).

    ``paper`` is the border colour for ``pad``; pass it when a small copy of the
    page is at hand (``paper_colour(preview)``), which is cheaper than the full page.
    """
    if img.mode != "RGB":
        img = img.convert("RGB")
    if mode == "pad" and paper is None:
        paper = paper_colour(img)
    return Image.fromarray(fit_array(np.asarray(img), size, mode, paper), "RGB")


def fit_array(arr: np.ndarray, size: int = 1024, mode: str = "pad",
              paper: tuple[int, int, int] | None = None) -> np.ndarray:
    """``fit`` on an RGB array (a view into the decoded page is fine): the pipeline's
    path, with no PIL copy of the page or the crop."""
    if mode not in RESIZE_MODES:
        raise ValueError(f"resize mode must be one of {RESIZE_MODES}, not {mode!r}")
    h, w = arr.shape[:2]
    if mode == "bucket":
        bucket = nearest_bucket(w, h, size)
        (rw, rh), (left, top) = cover_crop(w, h, bucket)
        scaled = resample_array(arr, (rw, rh))
        return scaled[top : top + bucket[1], left : left + bucket[0]]
    if mode == "stretch":
        return resample_array(arr, (size, size))
    if mode == "crop":
        side = min(w, h)
        left, top = (w - side) // 2, (h - side) // 2
        return resample_array(arr[top : top + side, left : left + side], (size, size))
    if paper is None:
        paper = paper_colour(Image.fromarray(np.ascontiguousarray(arr), "RGB"))
    scale = size / max(w, h)
    iw, ih = max(1, round(w * scale)), max(1, round(h * scale))
    canvas = np.empty((size, size, 3), np.uint8)
    canvas[:] = paper
    x, y = (size - iw) // 2, (size - ih) // 2
    canvas[y : y + ih, x : x + iw] = resample_array(arr, (iw, ih))
    return canvas


AREA_STEP = 1.25  # an area average first brings a crop within this much of its size


def resample(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """An RGB image resized to ``size``: an area average down to within AREA_STEP of it
    (when it is larger than that), then bicubic."""
    if img.size == size:
        return img.copy()
    return Image.fromarray(resample_array(np.asarray(img), size), "RGB")


def resample_array(arr: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``resample`` on an array; the same array back when it already has the size."""
    h, w = arr.shape[:2]
    if (w, h) == size:
        return arr
    tw, th = size
    if w > AREA_STEP * tw or h > AREA_STEP * th:
        near = (min(w, round(AREA_STEP * tw)), min(h, round(AREA_STEP * th)))
        arr = cv2.resize(arr, near, interpolation=cv2.INTER_AREA)
    return cv2.resize(arr, size, interpolation=cv2.INTER_CUBIC)


def upright(crop: np.ndarray | Image.Image, turned: int) -> np.ndarray | Image.Image:
    """A crop turned ``turned`` degrees clockwise (a picture on a page printed across the
    book): a LoRA learns whatever way up its images stand."""
    quarters = (turned // 90) % 4
    if not quarters:
        return crop
    if isinstance(crop, Image.Image):
        return crop.rotate(-90 * quarters, expand=True)
    return np.ascontiguousarray(np.rot90(crop, -quarters))


def crop_box(img: Image.Image, box: tuple[float, float, float, float]) -> Image.Image:
    """The part of ``img`` inside ``box`` (fractions of the image), at least 1 px."""
    return img.crop(crop_px(img.size, box))


def crop_array(arr: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """``crop_box`` on an array: a view, no copy."""
    x0, y0, x1, y1 = crop_px((arr.shape[1], arr.shape[0]), box)
    return arr[y0:y1, x0:x1]


def crop_px(size: tuple[int, int], box: tuple[float, float, float, float]
            ) -> tuple[int, int, int, int]:
    """The pixels ``crop_box`` and ``crop_array`` cut (a IIIF region fetches just them)."""
    w, h = size
    x0, y0 = min(w - 1, max(0, round(box[0] * w))), min(h - 1, max(0, round(box[1] * h)))
    x1, y1 = max(x0 + 1, min(w, round(box[2] * w))), max(y0 + 1, min(h, round(box[3] * h)))
    return x0, y0, x1, y1


def encode_jpeg(img: Image.Image | np.ndarray, quality: int = 92) -> bytes:
    """JPEG bytes (baseline, 4:2:0 as PIL writes them); the same image always gives the
    same bytes, so resumes match.

    An array goes to TurboJPEG as it is: PIL's copy of a 1024-px crop into an image of
    its own and its encoder took 2.5 ms more a crop, for the same quantisation.
    """
    if isinstance(img, np.ndarray):
        arr = np.ascontiguousarray(img)
        if simplejpeg is not None:
            return simplejpeg.encode_jpeg(arr, quality=quality, colorspace="RGB",
                                          colorsubsampling="420")
        img = Image.fromarray(arr, "RGB")
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=quality, optimize=False, progressive=False)
    return buf.getvalue()
