"""Pixel changes of one photo or scan into another camera's, shared by the robustness
benches (``bench.figure_robustness`` for scans, ``bench/vet_robustness.py`` for photos):
on uint8 RGB arrays, so both benches change light, colour and noise the same way."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Change = Callable[[np.ndarray], np.ndarray]


def gamma(g: float) -> Change:
    """Exposure: over 1 darker, under 1 lighter."""
    lut = (255 * (np.arange(256) / 255) ** g).round().astype(np.uint8)
    return lambda a: lut[a]


def tint(r: float, g: float, b: float) -> Change:
    """White balance: each channel scaled."""
    return lambda a: np.clip(a * np.array([r, g, b]), 0, 255).astype(np.uint8)


def noise(sigma: float) -> Change:
    """Sensor noise, the same draw every run."""
    def go(a: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(0)
        return np.clip(a + rng.normal(0, sigma, a.shape), 0, 255).astype(np.uint8)
    return go
