"""Library stamps told by their shape: a thin round ring of ink, whatever its colour.

Why: a black (or dark grey) ownership stamp is the printer's colour, so ``colour_ink``
cannot set it apart, and in grey it glues itself to the title or the arms it is inked
beside. Its outline is what no print has: one thin circle closed all round, a few text
lines across. A letter O is thick-stroked and empty inside; a picture's round frame is
many text lines across; a woodcut's hatching peaks radially here and there, not all round.

How: circles proposed by the Hough transform on the page's darkness (where the finder
would crop: a stamp anywhere else changes no crop), each kept only when
its darkness peaks at the radius (darker than a little inside and a little outside it)
in nearly every direction, so the ring is thin and closed; where it does not, the circle
is fitted again to the darkest point of each ray near it (the transform's circle is
about a pixel off at preview scale, as much as the ring is thick) and judged once more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

from archive.figures.config.proposals import PROPOSALS as C

Box = tuple[int, int, int, int]
# The ring's rules (how closed, how thin, how big, what lies round it) are the ``ring_``
# fields of ``config.proposals.PROPOSALS``, each with where it was measured.
_ANGLES = np.linspace(0.0, 2 * np.pi, C.ring_directions, endpoint=False)


def rings(d: np.ndarray, strong: np.ndarray, big: np.ndarray, th: float,
          window: Box | None = None, small: Sequence[Box] = (),
          inked_over: Callable[[float, float, float], bool] | None = None) -> list[Box]:
    """Boxes (px) of the stamps on a page: thin closed rings on its darkness ``d``, not
    solid inside (an icon is a dark disc), and not set in a picture: ``big`` (ink in shapes
    taller than glyphs) does not surround them (a roundel inside a woodcut is ringed by
    the woodcut's own lines). Only circles centred in ``window`` are looked for (the
    transform costs about 10 ms on a whole preview, a text page's every glyph voting).

    Round each of the ``small`` boxes (a stamp's size) the accumulator transform proposes
    circles too: a stamp inked across title letters or over text is crossed by them all
    round, and the gradient transform sees no circle there. Such a circle is a stamp only
    where ``inked_over`` says that what lies round it is what a library stamps over (a
    bell skirt's round outline is as thin and as round, with the picture round it)."""
    h, w = d.shape
    lo = int(max(C.ring_radius[0] * th, C.ring_side[0] * max(h, w)))
    hi = int(min(C.ring_radius[1] * th, C.ring_side[1] * max(h, w)))
    wx0, wy0, wx1, wy1 = window or (0, 0, w, h)
    wx0, wy0, wx1, wy1 = max(0, wx0 - hi), max(0, wy0 - hi), min(w, wx1 + hi), min(h, wy1 + hi)
    if hi <= lo or min(wx1 - wx0, wy1 - wy0) < 2 * lo:
        return []
    img = cv2.GaussianBlur(d[wy0:wy1, wx0:wx1], (0, 0), C.ring_blur)
    found = cv2.HoughCircles(img, cv2.HOUGH_GRADIENT_ALT, dp=C.ring_dp,
                             minDist=max(C.ring_min_dist_least_px, lo // C.ring_min_dist_div),
                             param1=C.ring_hough_edge, param2=C.ring_hough_round,
                             minRadius=lo, maxRadius=hi)
    proposed = [(cx + wx0, cy + wy0, r, False)
                for cx, cy, r in ([] if found is None else found[0].tolist())]
    if inked_over is not None:
        proposed += [(cx, cy, r, True) for b in small for cx, cy, r in _voted(d, b, lo, hi)]
    out: list[Box] = []
    for cx, cy, r, voted in proposed:
        fit = _ringed(d, strong, cx, cy, r)
        if fit is None:
            continue
        cx, cy, r = fit
        if voted and inked_over is not None and not inked_over(cx, cy, r):
            continue
        if (_disc(strong, cx, cy, C.ring_disc * r) <= C.ring_solid
                and around(big, cx, cy, r) <= C.ring_around):
            box = (max(0, int(cx - r - 1)), max(0, int(cy - r - 1)),
                   min(w, int(cx + r + 2)), min(h, int(cy + r + 2)))
            if not any(_overlaps(box, o) for o in out):
                out.append(box)
    return out


def _voted(d: np.ndarray, box: Box, lo: int, hi: int) -> list[tuple[float, float, float]]:
    """Circles (x, y, r in px) the accumulator transform finds round a small box: its
    votes add up along a ring that letters break all round."""
    h, w = d.shape
    m = max(C.ring_voted_margin_least_px, lo // C.ring_voted_margin_div)
    x0, y0 = max(0, box[0] - m), max(0, box[1] - m)
    x1, y1 = min(w, box[2] + m), min(h, box[3] + m)
    top = min(hi, max(x1 - x0, y1 - y0) // 2)
    if top < lo:
        return []
    img = cv2.GaussianBlur(d[y0:y1, x0:x1], (0, 0), C.ring_blur)
    found = cv2.HoughCircles(img, cv2.HOUGH_GRADIENT, dp=C.ring_dp,
                             minDist=C.ring_voted_min_dist_px, param1=C.ring_canny,
                             param2=C.ring_votes, minRadius=lo, maxRadius=top)
    return [(cx + x0, cy + y0, r) for cx, cy, r in ([] if found is None else found[0].tolist())]


def _ringed(d: np.ndarray, strong: np.ndarray, cx: float, cy: float, r: float
            ) -> tuple[float, float, float] | None:
    """The transform's circle, or the circle fitted to its ring (``_refit``), when it is
    a thin closed ring (``_ring``); else None. At preview scale the transform's fit is off
    by about a pixel, and a ring a pixel or two thick is then missed in a third of its
    directions: one stamp over a title was found at one preview size in six."""
    if _ring(d, strong, cx, cy, r):
        return cx, cy, r
    fit = _refit(d, cx, cy, r)
    return fit if fit is not None and _ring(d, strong, *fit) else None


def _refit(d: np.ndarray, cx: float, cy: float, r: float) -> tuple[float, float, float] | None:
    """The circle (least squares, algebraic) through the darkest point of each ray from
    the centre within ``ring_refit`` px of the radius; None when it moves further than
    that."""
    h, w = d.shape
    refit, step = C.ring_refit, C.ring_refit_step
    rr = r + np.arange(-refit, refit + step / 2, step)  # the span's far end read too
    xs = cx + rr[None, :] * np.cos(_ANGLES)[:, None]
    ys = cy + rr[None, :] * np.sin(_ANGLES)[:, None]
    xi = np.clip(np.round(xs).astype(int), 0, w - 1)
    yi = np.clip(np.round(ys).astype(int), 0, h - 1)
    prof = d[yi, xi]
    best = prof.argmax(axis=1)
    px, py = xs[np.arange(len(best)), best], ys[np.arange(len(best)), best]
    # a ray whose darkest point is at the end of its span crosses a letter, not the ring
    use = (best > 0) & (best < len(rr) - 1)
    for _ in range(C.ring_refit_rounds):  # fit, then again without the rays off it
        if use.sum() < C.ring_refit_rays * len(use):
            return None
        a = np.column_stack([px[use], py[use], np.ones(int(use.sum()))])
        (bx, by, c), *_ = np.linalg.lstsq(a, px[use] ** 2 + py[use] ** 2, rcond=None)
        fx, fy = bx / 2, by / 2
        fr = float(np.sqrt(max(0.0, c + fx * fx + fy * fy)))
        use &= np.abs(np.hypot(px - fx, py - fy) - fr) <= C.ring_refit_keep_px
    if max(abs(fx - cx), abs(fy - cy), abs(fr - r)) > refit:
        return None
    return float(fx), float(fy), fr


def _overlaps(a: Box, b: Box) -> bool:
    """Whether two boxes overlap (the same stamp found twice)."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _ring(d: np.ndarray, strong: np.ndarray, cx: float, cy: float, r: float) -> bool:
    """Whether the circle is a thin closed ring: its darkness at radius r (within a pixel,
    ``ring_on_offsets``) stands ``ring_rise`` above both ``ring_step`` px inside and
    ``ring_step`` px outside it in ``ring_closed`` of the directions, or, where print lies
    on either side of it (a stamp inked over a title crosses its letters, and cannot stand
    above them there), in ``ring_seen_closed`` of the directions not hidden so, with at
    most 1 - ``ring_seen`` of them hidden."""
    h, w = d.shape

    def at(rr: float, img: np.ndarray = d) -> np.ndarray:
        xs = np.clip(np.round(cx + rr * np.cos(_ANGLES)).astype(int), 0, w - 1)
        ys = np.clip(np.round(cy + rr * np.sin(_ANGLES)).astype(int), 0, h - 1)
        return img[ys, xs].astype(np.float32)

    step, rise = C.ring_step, C.ring_rise
    on = np.max([at(r + k) for k in C.ring_on_offsets], axis=0)
    peak = (on > at(r - step) + rise) & (on > at(r + step) + rise)
    if peak.mean() >= C.ring_closed:
        return True
    seen = peak | ~((at(r - step, strong) > 0) | (at(r + step, strong) > 0))
    return bool(seen.mean() >= C.ring_seen and peak.sum() >= C.ring_seen_closed * seen.sum())


def _disc(mask: np.ndarray, cx: float, cy: float, r: float) -> float:
    """Share of the disc of radius r that the mask covers."""
    h, w = mask.shape
    x0, y0 = max(0, int(cx - r)), max(0, int(cy - r))
    x1, y1 = min(w, int(cx + r) + 1), min(h, int(cy + r) + 1)
    yy, xx = np.ogrid[y0:y1, x0:x1]
    inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
    return float(mask[y0:y1, x0:x1][inside].mean()) if inside.any() else 0.0


def around(mask: np.ndarray, cx: float, cy: float, r: float) -> float:
    """Share of directions in which the mask has ink between ``ring_around_span`` radii
    out."""
    h, w = mask.shape
    hit = np.zeros(len(_ANGLES), bool)
    first, last = C.ring_around_span
    for k in np.linspace(first, last, C.ring_around_steps):
        xs = np.round(cx + k * r * np.cos(_ANGLES)).astype(int)
        ys = np.round(cy + k * r * np.sin(_ANGLES)).astype(int)
        ok = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        hit[ok] |= mask[ys[ok], xs[ok]]
    return float(hit.mean())
