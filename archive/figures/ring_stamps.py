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

Box = tuple[int, int, int, int]
RING = 0.85  # share of directions in which the darkness peaks at the radius: a closed ring
SEEN, RING_SEEN = 0.7, 0.9  # a stamp inked over a title: its ring is hidden under letters
# in up to 3 directions in 10, and where it is seen it must be closed nearly all round
RADIUS = (3.0, 12.0)  # text heights: a stamp is a few lines across, never a plate
SIDE = (0.035, 0.12)  # of the long side, the radius: a stamp is a few cm on a page, a
# round plate is bigger, and a small round mark (an icon, a seal on a letter) is smaller
STEP = 3  # px at preview scale: inside and outside the ring, where it must be paler
RISE = 8  # darkness levels the ring stands above both sides of it
EDGE, ROUND = 300, 0.5  # the transform's edge threshold and least circle perfectness
SOLID = 0.45  # most share of strong ink inside the ring: a stamp's legend and emblem
AROUND = 0.5  # most share of directions in which a picture's big shapes lie just outside
REFIT = 2.0  # px: how far from the transform's circle its ring is looked for
CANNY, VOTES = 100, 20  # the accumulator transform's edge threshold and least votes
_ANGLES = np.linspace(0.0, 2 * np.pi, 90, endpoint=False)


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
    lo = int(max(RADIUS[0] * th, SIDE[0] * max(h, w)))
    hi = int(min(RADIUS[1] * th, SIDE[1] * max(h, w)))
    wx0, wy0, wx1, wy1 = window or (0, 0, w, h)
    wx0, wy0, wx1, wy1 = max(0, wx0 - hi), max(0, wy0 - hi), min(w, wx1 + hi), min(h, wy1 + hi)
    if hi <= lo or min(wx1 - wx0, wy1 - wy0) < 2 * lo:
        return []
    img = cv2.GaussianBlur(d[wy0:wy1, wx0:wx1], (0, 0), 0.8)
    found = cv2.HoughCircles(img, cv2.HOUGH_GRADIENT_ALT, dp=1, minDist=max(4, lo // 2),
                             param1=EDGE, param2=ROUND, minRadius=lo, maxRadius=hi)
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
        if _disc(strong, cx, cy, 0.8 * r) <= SOLID and around(big, cx, cy, r) <= AROUND:
            box = (max(0, int(cx - r - 1)), max(0, int(cy - r - 1)),
                   min(w, int(cx + r + 2)), min(h, int(cy + r + 2)))
            if not any(_overlaps(box, o) for o in out):
                out.append(box)
    return out


def _voted(d: np.ndarray, box: Box, lo: int, hi: int) -> list[tuple[float, float, float]]:
    """Circles (x, y, r in px) the accumulator transform finds round a small box: its
    votes add up along a ring that letters break all round."""
    h, w = d.shape
    m = max(2, lo // 2)
    x0, y0 = max(0, box[0] - m), max(0, box[1] - m)
    x1, y1 = min(w, box[2] + m), min(h, box[3] + m)
    top = min(hi, max(x1 - x0, y1 - y0) // 2)
    if top < lo:
        return []
    img = cv2.GaussianBlur(d[y0:y1, x0:x1], (0, 0), 0.8)
    found = cv2.HoughCircles(img, cv2.HOUGH_GRADIENT, dp=1, minDist=2, param1=CANNY,
                             param2=VOTES, minRadius=lo, maxRadius=top)
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
    the centre within REFIT px of the radius; None when it moves further than that."""
    h, w = d.shape
    rr = r + np.arange(-REFIT, REFIT + 0.25, 0.5)
    xs = cx + rr[None, :] * np.cos(_ANGLES)[:, None]
    ys = cy + rr[None, :] * np.sin(_ANGLES)[:, None]
    xi = np.clip(np.round(xs).astype(int), 0, w - 1)
    yi = np.clip(np.round(ys).astype(int), 0, h - 1)
    prof = d[yi, xi]
    best = prof.argmax(axis=1)
    px, py = xs[np.arange(len(best)), best], ys[np.arange(len(best)), best]
    # a ray whose darkest point is at the end of its span crosses a letter, not the ring
    use = (best > 0) & (best < len(rr) - 1)
    for _ in range(2):  # fit, then again without the rays more than a pixel off it
        if use.sum() < 0.5 * len(use):
            return None
        a = np.column_stack([px[use], py[use], np.ones(int(use.sum()))])
        (bx, by, c), *_ = np.linalg.lstsq(a, px[use] ** 2 + py[use] ** 2, rcond=None)
        fx, fy = bx / 2, by / 2
        fr = float(np.sqrt(max(0.0, c + fx * fx + fy * fy)))
        use &= np.abs(np.hypot(px - fx, py - fy) - fr) <= 1.0
    if max(abs(fx - cx), abs(fy - cy), abs(fr - r)) > REFIT:
        return None
    return float(fx), float(fy), fr


def _overlaps(a: Box, b: Box) -> bool:
    """Whether two boxes overlap (the same stamp found twice)."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _ring(d: np.ndarray, strong: np.ndarray, cx: float, cy: float, r: float) -> bool:
    """Whether the circle is a thin closed ring: its darkness at radius r (within a pixel)
    stands RISE above both STEP px inside and STEP px outside it in RING of the
    directions, or, where print lies on either side of it (a stamp inked over a title
    crosses its letters, and cannot stand above them there), in RING_SEEN of the
    directions not hidden so, with at most 1 - SEEN of them hidden."""
    h, w = d.shape

    def at(rr: float, img: np.ndarray = d) -> np.ndarray:
        xs = np.clip(np.round(cx + rr * np.cos(_ANGLES)).astype(int), 0, w - 1)
        ys = np.clip(np.round(cy + rr * np.sin(_ANGLES)).astype(int), 0, h - 1)
        return img[ys, xs].astype(np.float32)

    on = np.max([at(r + k) for k in (-1.0, -0.5, 0.0, 0.5, 1.0)], axis=0)
    peak = (on > at(r - STEP) + RISE) & (on > at(r + STEP) + RISE)
    if peak.mean() >= RING:
        return True
    seen = peak | ~((at(r - STEP, strong) > 0) | (at(r + STEP, strong) > 0))
    return bool(seen.mean() >= SEEN and peak.sum() >= RING_SEEN * seen.sum())


def _disc(mask: np.ndarray, cx: float, cy: float, r: float) -> float:
    """Share of the disc of radius r that the mask covers."""
    h, w = mask.shape
    x0, y0 = max(0, int(cx - r)), max(0, int(cy - r))
    x1, y1 = min(w, int(cx + r) + 1), min(h, int(cy + r) + 1)
    yy, xx = np.ogrid[y0:y1, x0:x1]
    inside = (xx - cx) ** 2 + (yy - cy) ** 2 <= r * r
    return float(mask[y0:y1, x0:x1][inside].mean()) if inside.any() else 0.0


def around(mask: np.ndarray, cx: float, cy: float, r: float) -> float:
    """Share of directions in which the mask has ink between 1.25 and 1.75 radii out."""
    h, w = mask.shape
    hit = np.zeros(len(_ANGLES), bool)
    for k in np.linspace(1.25, 1.75, 5):
        xs = np.round(cx + k * r * np.cos(_ANGLES)).astype(int)
        ys = np.round(cy + k * r * np.sin(_ANGLES)).astype(int)
        ok = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        hit[ok] |= mask[ys[ok], xs[ok]]
    return float(hit.mean())
