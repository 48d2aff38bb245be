"""Grad-CAM overlay: where the condition head looked, over the whole photo.

The holder runs requests under ``torch.inference_mode()``, whose tensors can
never require grad, so the heatmap pass builds a fresh input inside
``inference_mode(False)`` + ``enable_grad()`` and differentiates only with
respect to the last feature map (no parameter gradients are kept). The map
follows the model's own view of the photo (``config.image_fit``): a letterboxed
or crop-covered photo gets a map that reaches every edge; only the old centre
crop leaves the ends blank.
"""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from vet.imaging import IMAGE_SIZE, crop_boxes, letterbox_box, to_tensor

Box = tuple[int, int, int, int]


def _raw_cams(model, image: Image.Image, class_index: int, size: int, fit: str
              ) -> torch.Tensor:
    """Grad-CAM before normalisation, one (h, w) map per model view of the photo."""
    with torch.inference_mode(False), torch.enable_grad():
        x = to_tensor([image], size, fit).clone()
        out = model(pixel_values=x, return_feature_map=True)
        fmap = out.feature_map
        (grad,) = torch.autograd.grad(out.logits[:, class_index].sum(), fmap)
        return ((grad.mean((2, 3), keepdim=True) * fmap).sum(1)).detach()


def _unit(raw: torch.Tensor) -> torch.Tensor:
    # Grad-CAM keeps only positive evidence; when there is none (an unlikely class),
    # show where the evidence is least negative rather than a blank map.
    cam = torch.relu(raw) if float(raw.max()) > 0 else raw
    cam = cam - cam.min()
    return cam / cam.max() if float(cam.max()) > 0 else cam


def _resize(cam: np.ndarray, w: int, h: int) -> np.ndarray:
    img = Image.fromarray((np.clip(cam, 0, 1) * 255).astype(np.uint8)).resize(
        (max(1, w), max(1, h)), Image.BILINEAR)
    return np.asarray(img, dtype=np.float32) / 255.0


def grad_cam(model, image: Image.Image, class_index: int, size: int = IMAGE_SIZE,
             fit: str | None = None) -> tuple[np.ndarray, Box]:
    """A [0, 1] class-activation map and the box of the photo it covers.

    ``fit`` defaults to the model's ``config.image_fit``. For ``letterbox``, ``crops`` and
    ``both`` the box is the whole photo; for ``crop`` it is the centre square.
    """
    fit = fit or getattr(model.config, "image_fit", "crop")
    w, h = image.size
    cams = _unit(_raw_cams(model, image, class_index, size, fit)).numpy()
    if fit == "letterbox":
        x0, y0, x1, y1 = letterbox_box(w, h, size)
        full = _resize(cams[0], size, size)[y0:y1, x0:x1]
        return full, (0, 0, w, h)
    if fit == "both":  # the whole photo's map, the centre crop's averaged in where it looked
        x0, y0, x1, y1 = letterbox_box(w, h, size)
        total = _resize(cams[1], size, size)[y0:y1, x0:x1].copy()
        hits = np.ones_like(total)
        scale = total.shape[1] / w
        a, b, c, d = (round(v * scale) for v in _centre_square(w, h))
        c, d = min(c, total.shape[1]), min(d, total.shape[0])
        total[b:d, a:c] += _resize(cams[0], c - a, d - b)[: d - b, : c - a]
        hits[b:d, a:c] += 1
        return total / hits, (0, 0, w, h)
    if fit == "crops":
        scale = min(1.0, 2 * size / max(w, h))  # the map needs no more detail than this
        sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
        total, hits = np.zeros((sh, sw), np.float32), np.zeros((sh, sw), np.float32)
        for cam, (a, b, c, d) in zip(cams, crop_boxes(w, h), strict=True):
            a, b, c, d = (round(v * scale) for v in (a, b, c, d))
            total[b:d, a:c] += _resize(cam, c - a, d - b)[: d - b, : c - a]
            hits[b:d, a:c] += 1
        return total / np.maximum(hits, 1), (0, 0, w, h)
    return _resize(cams[0], size, size), _centre_square(w, h)


def _centre_square(w: int, h: int) -> Box:
    """What a ``crop`` model sees of a w x h photo."""
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    return left, top, left + side, top + side


def overlay(image: Image.Image, cam: np.ndarray, box: Box | None = None,
            alpha: float = 0.45) -> Image.Image:
    """The map blended onto the full photo, same size as the photo.

    ``box`` is the part of the photo the map covers (default: the centre square,
    what a ``crop`` model sees); outside it the photo is left uncoloured.
    """
    w, h = image.size
    x0, y0, x1, y1 = box or _centre_square(w, h)
    full = np.zeros((h, w), dtype=np.float32)
    full[y0:y1, x0:x1] = _resize(cam, x1 - x0, y1 - y0)
    # A small red-yellow ramp: cold areas stay as they are, hot ones turn red then yellow.
    heat = np.stack([np.clip(full * 2, 0, 1), np.clip(full * 2 - 1, 0, 1), np.zeros_like(full)], -1)
    base = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    a = (alpha * full)[..., None]
    out = base * (1 - a) + heat * a
    return Image.fromarray((out * 255).clip(0, 255).astype(np.uint8), "RGB")
