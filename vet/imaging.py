"""Safe image loading and the exact preprocessing the Lite0 weights expect.

Phone photos arrive rotated, as CMYK JPEGs, 16-bit PNGs or truncated uploads;
each must become a clean RGB image or a one-line reason, never a traceback.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageOps, UnidentifiedImageError

# ~ a 8000x6000 phone photo; beyond that we refuse (self-hosters: VET_MAX_PIXELS)
MAX_PIXELS = int(os.environ.get("VET_MAX_PIXELS", 50_000_000))
MIN_SIDE = 32  # below this there is nothing to see
IMAGE_SIZE = 224
MEAN = STD = 0.5  # the Lite0 TF weights were trained on [-1, 1] inputs


class BadImage(ValueError):
    """An input we cannot use; the message is shown to the farmer as is."""


def load_image(
    source: str | Path | bytes | Image.Image | np.ndarray, draft: int | None = None
) -> Image.Image:
    """Open, verify and normalise an image to RGB, upright, fully decoded.

    ``draft`` lets JPEG decoding skip detail below that many pixels (a 4000 px
    phone photo decodes several times faster); batch runs use it, the heatmap
    path does not so the overlay keeps the photo's own size.
    """
    if isinstance(source, np.ndarray):  # what gr.Image(type="numpy") hands over
        try:
            source = Image.fromarray(source)
        except (TypeError, ValueError) as exc:
            raise BadImage(f"unsupported array: {exc}") from None
    if isinstance(source, Image.Image):
        img = source
    else:
        data = source
        if isinstance(source, (str, Path)):
            path = Path(source)
            if not path.is_file():
                raise BadImage(f"file not found: {path}")
            data = path.read_bytes()
        if not data:
            raise BadImage("empty file")
        try:
            img = _open_bytes(data, draft)
        except BadImage:
            raise
        except Image.DecompressionBombError as exc:
            raise BadImage(f"image too large (decompression bomb guard): {exc}") from None
        except UnidentifiedImageError:
            raise BadImage("not an image (PIL cannot identify the file)") from None
        except (OSError, SyntaxError, ValueError) as exc:
            raise BadImage(f"broken or truncated image: {exc}") from None
    w, h = img.size
    if w * h > MAX_PIXELS:
        raise BadImage(f"image too large: {w}x{h} pixels (limit {MAX_PIXELS:,}, VET_MAX_PIXELS)")
    if min(w, h) < MIN_SIDE:
        raise BadImage(f"image too small: {w}x{h}; send a photo at least {MIN_SIDE} px wide")
    try:
        return _to_rgb(img)
    except (OSError, ValueError) as exc:
        raise BadImage(f"cannot decode image: {exc}") from None


def _open_bytes(data: bytes, draft: int | None = None) -> Image.Image:
    """Open, check the size from the header, and only then decode.

    No global state is touched (neither PIL's limit nor the warnings filter), so
    concurrent requests cannot see each other's settings. PIL itself refuses
    anything over twice its own limit at open time.
    """
    img = Image.open(io.BytesIO(data))
    w, h = img.size
    if w * h > MAX_PIXELS:
        raise BadImage(f"image too large: {w}x{h} pixels (limit {MAX_PIXELS:,}, VET_MAX_PIXELS)")
    if draft and img.format == "JPEG" and img.mode in ("RGB", "L"):
        img.draft(img.mode, (draft, draft))
    img.load()  # a truncated JPEG fails here, not later inside the model
    return img


def _to_rgb(img: Image.Image) -> Image.Image:
    img = ImageOps.exif_transpose(img) or img
    if img.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        arr = np.asarray(img, dtype=np.float64)
        hi = float(arr.max()) or 1.0
        img = Image.fromarray((arr / hi * 255.0).clip(0, 255).astype(np.uint8), "L")
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        bg = Image.new("RGB", rgba.size, (255, 255, 255))
        bg.paste(rgba, mask=rgba.getchannel("A"))
        return bg
    return img.convert("RGB")


# How a photo becomes the model's square input(s). ``both``: the centre crop and the whole
# photo letterboxed, their outputs averaged (issue #62: no worse than the centre crop on any
# source for FMD right-or-warned and confidently wrong, where letterbox alone was not).
FITS = ("crop", "letterbox", "crops", "both")
PAD = 128  # letterbox fill: mid-grey, 0 after normalisation (no signal for the convolutions)


def resize_crop(img: Image.Image, size: int = IMAGE_SIZE) -> Image.Image:
    """Shorter side to ``size``, then the centre square: on a wide photo the left and
    right ends (a cow's head and rear) are cut off; :func:`letterbox` keeps them."""
    w, h = img.size
    scale = size / min(w, h)
    nw, nh = max(size, round(w * scale)), max(size, round(h * scale))
    img = img.resize((nw, nh), Image.BICUBIC, reducing_gap=3.0)
    left, top = (nw - size) // 2, (nh - size) // 2
    return img.crop((left, top, left + size, top + size))


def letterbox_box(w: int, h: int, size: int = IMAGE_SIZE) -> tuple[int, int, int, int]:
    """Where the whole photo sits inside the ``size`` square after :func:`letterbox`."""
    scale = size / max(w, h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    left, top = (size - nw) // 2, (size - nh) // 2
    return left, top, left + nw, top + nh


def letterbox(img: Image.Image, size: int = IMAGE_SIZE) -> Image.Image:
    """The whole photo, longer side to ``size``, centred on mid-grey: nothing is cut off."""
    x0, y0, x1, y1 = letterbox_box(*img.size, size)
    out = Image.new("RGB", (size, size), (PAD, PAD, PAD))
    out.paste(img.resize((x1 - x0, y1 - y0), Image.BICUBIC, reducing_gap=3.0), (x0, y0))
    return out


def crop_boxes(w: int, h: int) -> list[tuple[int, int, int, int]]:
    """Squares of the shorter side that together cover the photo: one for a square-ish
    photo, two for 4:3 to 16:9, three for a panorama; they overlap evenly."""
    side, long = min(w, h), max(w, h)
    n = max(1, min(3, math.ceil(long / side - 0.15)))
    starts = [round(i * (long - side) / (n - 1)) for i in range(n)] if n > 1 else [
        (long - side) // 2]
    return [(s, 0, s + side, side) if w >= h else (0, s, side, s + side) for s in starts]


def views(img: Image.Image, size: int = IMAGE_SIZE, fit: str = "crop") -> list[Image.Image]:
    """The model inputs for one photo: the centre square (``crop``), the whole photo
    letterboxed (``letterbox``), squares covering it (``crops``), or the centre square and
    the whole photo (``both``); a photo's several views have their outputs averaged."""
    if fit == "letterbox":
        return [letterbox(img, size)]
    if fit == "both":
        return [resize_crop(img, size), letterbox(img, size)]
    if fit == "crops":
        return [resize_crop(img.crop(b), size) for b in crop_boxes(*img.size)]
    if fit == "crop":
        return [resize_crop(img, size)]
    raise ValueError(f"unknown fit {fit!r}; one of {FITS}")


def to_tensor(imgs: list[Image.Image], size: int = IMAGE_SIZE, fit: str = "crop"
              ) -> torch.Tensor:
    """A normalised float batch (N, 3, size, size) in [-1, 1]: every view of every photo,
    in order (``crops`` gives a photo one row per covering square, ``both`` two)."""
    arr = np.stack([np.asarray(v, dtype=np.uint8) for im in imgs for v in views(im, size, fit)])
    return normalize(torch.from_numpy(arr).permute(0, 3, 1, 2))


def view_counts(imgs: list[Image.Image], fit: str = "crop") -> list[int]:
    """How many rows of :func:`to_tensor` each photo takes."""
    return [len(crop_boxes(*im.size)) if fit == "crops" else 2 if fit == "both" else 1
            for im in imgs]


def normalize(batch_uint8: torch.Tensor) -> torch.Tensor:
    return (batch_uint8.float() / 255.0 - MEAN) / STD
