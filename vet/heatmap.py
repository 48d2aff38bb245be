"""Grad-CAM overlay: where the condition head looked.

The holder runs requests under ``torch.inference_mode()``, whose tensors can
never require grad, so the heatmap pass builds a fresh input inside
``inference_mode(False)`` + ``enable_grad()`` and differentiates only with
respect to the last feature map (no parameter gradients are kept).
"""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from vet.imaging import IMAGE_SIZE, to_tensor


def grad_cam(model, image: Image.Image, class_index: int, size: int = IMAGE_SIZE) -> np.ndarray:
    """A [0, 1] class-activation map over the model's centre crop, shape (size, size)."""
    with torch.inference_mode(False), torch.enable_grad():
        x = to_tensor([image], size).clone()
        out = model(pixel_values=x, return_feature_map=True)
        fmap = out.feature_map
        score = out.logits[0, class_index]
        (grad,) = torch.autograd.grad(score, fmap)
        weights = grad.mean((2, 3), keepdim=True)
        raw = (weights * fmap).sum(1)[0].detach()
    # Grad-CAM keeps only positive evidence; when there is none (an unlikely class),
    # show where the evidence is least negative rather than a blank map.
    cam = torch.relu(raw) if float(raw.max()) > 0 else raw
    cam = cam - cam.min()
    if float(cam.max()) > 0:
        cam = cam / cam.max()
    img = Image.fromarray((cam.numpy() * 255).astype(np.uint8)).resize((size, size),
                                                                       Image.BILINEAR)
    return np.asarray(img, dtype=np.float32) / 255.0


def overlay(image: Image.Image, cam: np.ndarray, alpha: float = 0.45) -> Image.Image:
    """The map blended onto the full photo, same size as the photo.

    The model sees the central square crop, so the map is placed there and the
    rest of the photo is left uncoloured.
    """
    w, h = image.size
    side = min(w, h)
    left, top = (w - side) // 2, (h - side) // 2
    full = np.zeros((h, w), dtype=np.float32)
    resized = Image.fromarray((cam * 255).astype(np.uint8)).resize((side, side), Image.BILINEAR)
    full[top: top + side, left: left + side] = np.asarray(resized, dtype=np.float32) / 255.0
    # A small red-yellow ramp: cold areas stay as they are, hot ones turn red then yellow.
    heat = np.stack([np.clip(full * 2, 0, 1), np.clip(full * 2 - 1, 0, 1), np.zeros_like(full)], -1)
    base = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
    a = (alpha * full)[..., None]
    out = base * (1 - a) + heat * a
    return Image.fromarray((out * 255).clip(0, 255).astype(np.uint8), "RGB")
