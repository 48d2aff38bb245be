"""Where a page is set text: text has a line rhythm, a picture does not.

Why: at preview scale a column of text is a grey texture, and a pale woodcut breaks
into glyph-sized specks, so neither shape sizes nor ink density tell them apart. What
does is the rhythm: set lines repeat at the page's line pitch, with near-empty gaps
between them, and a picture's specks fall anywhere.

How: only glyph-sized shapes count (a woodcut's connected mass is never a glyph). Their
ink, averaged over a few text heights across, gives a density for every row; the line
pitch is the shortest lag at which that density repeats over the whole page nearly as
well as at its best (twice the pitch repeats as well: ``_pitch``). A place is
text when, over a window four pitches tall, the density correlates with itself one
pitch on and anti-correlates half a pitch on (lines and gaps alternate). Everything is
measured in the page's own text height, so any scan resolution reads the same.
"""

from __future__ import annotations

import cv2
import numpy as np

from archive.figures.config.ink import INK as C
from archive.figures.config.units import UNITS

GLYPH_H = UNITS.glyph_h  # ``skew`` imports it by this name


def glyph_mask(labels: np.ndarray, stats: np.ndarray, th: float) -> np.ndarray:
    """The ink of shapes no taller than a glyph (stats row 0 is the background)."""
    glyph = stats[:, 3] <= UNITS.glyph_h * th
    glyph[0] = False
    return glyph[labels]


def rhythm(glyphs: np.ndarray, th: float, th_rows: float | None = None
           ) -> tuple[np.ndarray, int]:
    """Per-pixel rhythm (about -2..2; text above ``INK.rhythm``) and the page's line pitch, px.

    ``th`` is the text height in columns, ``th_rows`` in rows (the same unless the
    columns were thinned).
    """
    th_rows = th if th_rows is None else th_rows
    r = cv2.boxFilter(glyphs.astype(np.float32), -1,
                      (max(C.least_kernel, round(C.density_width * th)), 1),
                      normalize=True, borderType=cv2.BORDER_CONSTANT)
    pitch = _pitch(r, th_rows)
    win = C.window_pitches * pitch
    mean = _vbox(r, win)
    var = _vbox(r * r, win) - mean * mean
    half = max(1, pitch // 2)
    rh = _lag_corr(r, pitch, win, mean, var) - _lag_corr(r, half, win, mean, var)
    return np.where(var > C.flat_density, rh, 0.0), pitch


def text_zone(glyphs: np.ndarray, th: float) -> np.ndarray:
    """Where the page reads as set text.

    Rows need their full resolution, columns do not (the density is averaged over five
    text heights across anyway), so the rhythm is found on every other column.
    """
    if not glyphs.any():
        return np.zeros_like(glyphs)
    h, w = glyphs.shape
    step = 2 if w >= C.thin_from * th else 1
    narrow = glyphs[:, ::step] if step == 1 else cv2.resize(
        glyphs.astype(np.float32), ((w + 1) // 2, h), interpolation=cv2.INTER_AREA)
    rh, _pitch = rhythm(narrow, th / step, th)
    zone = (rh >= C.rhythm).astype(np.uint8)
    return cv2.resize(zone, (w, h), interpolation=cv2.INTER_NEAREST) > 0 if step > 1 else zone > 0


def _pitch(r: np.ndarray, th: float) -> int:
    """The lag (1.2-3 text heights: ``INK.pitch_least``, ``INK.pitch_most``) at which the
    row density repeats over the page: the shortest that repeats nearly as well as the
    best (``INK.octave``). Lines set tight repeat as well two lines on as one (an
    incunable's at 6 px and 13 px on a 375 px preview), and the double pitch reads every
    line against the next as a gap."""
    lags = list(range(max(C.pitch_least_px, int(np.ceil(C.pitch_least * th))),
                      max(C.pitch_most_px, int(C.pitch_most * th)) + 1))
    mean = float(r.mean())
    score = [float((r[:-lag] * r[lag:]).mean()) - mean * mean for lag in lags]
    near = C.octave * max(score)
    peaks = [i for i, v in enumerate(score) if v >= near
             and (i == 0 or v >= score[i - 1]) and (i == len(score) - 1 or v >= score[i + 1])]
    return lags[peaks[0]] if peaks else lags[int(np.argmax(score))]


def _vbox(a: np.ndarray, n: int) -> np.ndarray:
    return cv2.boxFilter(a, -1, (1, n), normalize=True, borderType=cv2.BORDER_REFLECT)


def _lag_corr(r: np.ndarray, lag: int, win: int, mean: np.ndarray, var: np.ndarray
              ) -> np.ndarray:
    """Correlation of the density with itself ``lag`` rows on, over a ``win``-row window."""
    on = np.empty_like(r)
    on[:-lag], on[-lag:] = r[lag:], r[-1:]
    return (_vbox(r * on, win) - mean * _vbox(on, win)) / np.maximum(var, C.variance_floor)
