"""Page filter: keep illustration pages of a scanned book, drop text pages.

Why not the seed rule "grayscale std > 45": binarized text pages have std ~74, so every
one of them is kept, and std changes with resolution. The default filter instead looks
at *layout*: every page is box-filtered to a fixed working size (longer side WORK_SIDE)
so scores do not depend on the input resolution, and then cheap statistics are taken:
how periodic the row-ink profile is (text lines repeat, engravings don't), whether
16-px blocks are horizontal stripes (text) or not (figure), mid-tone and colour share,
and gradient anisotropy; a 20-px tile map (share and largest connected region of
"picture" tiles: mid-tones, diagonal edges, solid ink), ink run lengths along rows and
columns (rules, frames), and saturation / hue spread of a ~64-px colour thumbnail.
A logistic regression fitted by bench/fit_filter.py on the real scans in shared/data
combines the 39 features; its coefficients live in filter_model.json.

Measured (leave-one-document-out CV, bench/fit_filter.py): keeps ~96% of illustrations
and drops ~99% of binarized book text, but only about a third of the text pages of
modern mixed documents (ufal: slides, theses, forms, tables), so the issue #3 target
(>= 90% text dropped overall) is NOT met on that material. A small tree ensemble on the
same features and a logistic regression on pretrained CNN (EfficientNet-Lite0) features
did no better in the same CV (numbers in bench/fit_filter.py's docstring).

Ornaments, vignettes and inline figures: the default ignores figure size, so a text
page with a big figure is usually kept, while a text page with a small vignette or a
decorative initial is usually dropped because its text dominates the statistics. A
page with a lone small vignette on blank paper has no text cue and is kept.
``min_figure_area`` (fraction of the page, default 0.0 = off) adds a hard rule: the
estimated figure area (largest connected group of non-text, non-blank blocks) must
reach it, else the page is dropped with reason "figure area X < Y". Use ~0.05 to drop
vignettes, tail-pieces and small inline figures; raise it to keep only plates. Pages
with no ink at all (blank, all-black) are dropped as "blank page".

The shipped threshold is recall-first (keep >= 95% of illustrations in grouped CV); on
mixed modern documents (slides, theses) that keeps many text pages. Pass a higher
``threshold`` to trade recall for text drop; the CV trade-off table is in the JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

from archive import figures

FILTER_NAMES = ("figures", "layout", "std")
MODEL_PATH = Path(__file__).with_name("filter_model.json")
WORK_SIDE = 320
BLOCK = 16
STD_THRESHOLD = 45.0
FEATURE_NAMES = (
    "std",
    "ink",
    "mid",
    "paper",
    "aniso",
    "edges",
    "period",
    "stripe",
    "text_blocks",
    "fig_blocks",
    "fig_area",
    "colour",
    "flat_mid",
    "tile_period",
    "aperiodic_area",
    # 20-px tile map: which tiles look like pictures (mid-tones, diagonal edges, solid)
    "t_inked",
    "t_pic",
    "t_txt",
    "t_pic_share",
    "t_pic_lc",
    "t_nontext_lc",
    "t_mid_mean",
    "t_diag_mean",
    "t_diag_q90",
    "t_mid_q90",
    "t_stripe_q10",
    "t_stripe_med",
    "t_ink_std",
    # ink run lengths along rows and columns: rules, frames, solid areas vs glyphs
    "run_h_long",
    "run_v_long",
    "run_h_mean",
    "run_v_mean",
    "run_h_med",
    "empty_rows",
    # colour of a ~64-px thumbnail (all zero for grey pages)
    "chroma30",
    "chroma70",
    "chroma_mean",
    "hue_ent",
    "chroma_rel",
)
TILE = 64
PIC_TILE = 20
N_COLOUR = 5


@dataclass(frozen=True)
class Verdict:
    kept: bool
    score: float
    reason: str


def _flatten(page: Image.Image) -> Image.Image:
    """Bring any PIL mode to RGB or L; 16-bit and float scans are rescaled, not clipped."""
    mode = page.mode
    if mode in ("L", "RGB"):
        return page
    if mode in ("1", "P", "LA", "PA", "RGBA", "RGBa", "La") or "A" in mode:
        rgba = page.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    if mode.startswith("I") or mode == "F":
        arr = np.asarray(page, dtype=np.float64)
        hi = float(np.nanmax(arr)) if arr.size else 0.0
        scale = 1.0 if hi <= 255 else 255.0 / (65535.0 if hi <= 65535 else hi)
        arr = np.nan_to_num(arr * scale).clip(0, 255).astype(np.uint8)
        return Image.fromarray(arr, "L")
    return page.convert("RGB")


def _shrink(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Area-average to size; integer reduce() first because BOX on a big page is slow."""
    factor = min(img.size[0] // size[0], img.size[1] // size[1])
    if factor >= 2:
        img = img.reduce(factor)
    return img.resize(size, Image.Resampling.BOX)


def _working(page: Image.Image, colour: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Grey array at the fixed working size, area-averaged, and an RGB thumbnail (or None)."""
    img = _flatten(page)
    w, h = img.size
    scale = WORK_SIDE / max(w, h)
    size = (max(BLOCK, round(w * scale)), max(BLOCK, round(h * scale)))
    grey = np.asarray(_shrink(img.convert("L"), size), dtype=np.float32)
    thumb = None
    if colour and img.mode == "RGB":
        # colour needs no detail: a ~64-px thumbnail keeps this under half a millisecond
        thumb = np.asarray(_shrink(img, (max(1, size[0] // 5), max(1, size[1] // 5))))
    return grey, thumb


def _colour_stats(thumb: np.ndarray | None) -> tuple[list[float], float]:
    """Saturated shares, mean chroma, hue entropy and paper-relative chroma; plus 'colour'."""
    if thumb is None:
        return [0.0] * N_COLOUR, 0.0
    a = thumb.astype(np.int16)
    chroma = a.max(axis=2) - a.min(axis=2)
    med = float(np.median(chroma))
    sat = chroma > 40
    hue_ent = 0.0
    if sat.sum() > 5:
        r, g, b = a[..., 0][sat], a[..., 1][sat], a[..., 2][sat]
        hue = np.arctan2(np.sqrt(3) * (g - b), 2 * r - g - b)
        hb = np.bincount(((hue + np.pi) / (2 * np.pi) * 12).astype(int) % 12, minlength=12)
        hb = hb / hb.sum()
        hue_ent = float(-(hb * np.log(hb + 1e-12)).sum() / np.log(12))
    stats = [
        float(np.mean(chroma > 30)),
        float(np.mean(chroma > 70)),
        float(chroma.mean() / 255.0),
        hue_ent,
        float(np.mean(chroma > med + 25)),
    ]
    return stats, float(np.mean(chroma > med + 40))


def _picture_tiles(dark: np.ndarray) -> list[float]:
    """20-px tiles classed as picture (mid-tones, diagonal edges or solid) or text (stripes).

    Returns the 13 t_* features: shares of inked / picture / text tiles, the largest
    connected picture and non-text regions, and quantiles of the per-tile cues.
    """
    t = PIC_TILE
    h, w = dark.shape
    nh, nw = h // t, w // t
    if nh == 0 or nw == 0:
        return [0.0] * 13
    td = dark[: nh * t, : nw * t]
    gx = np.abs(td[1:-1, 2:] - td[1:-1, :-2])
    gy = np.abs(td[2:, 1:-1] - td[:-2, 1:-1])
    mag = np.maximum(gx, gy)
    # both components large: the edge runs between ~22 and ~68 degrees
    dmag = np.where(np.minimum(gx, gy) > 0.414 * mag, mag, 0.0)
    cuts_h, cuts_w = np.arange(0, nh * t - 2, t), np.arange(0, nw * t - 2, t)
    tmag = np.add.reduceat(np.add.reduceat(mag, cuts_h, axis=0), cuts_w, axis=1)
    tdmag = np.add.reduceat(np.add.reduceat(dmag, cuts_h, axis=0), cuts_w, axis=1)
    tdiag = tdmag / (tmag + 1e-6)
    td = td.reshape(nh, t, nw, t)
    tink = (td > 0.5).mean(axis=(1, 3))
    tmid = ((td > 0.15) & (td < 0.6)).mean(axis=(1, 3))
    tmean = td.mean(axis=(1, 3))
    rv = td.mean(axis=3).var(axis=1)
    cv = td.mean(axis=1).var(axis=2)
    tstripe = rv / (rv + cv + 1e-4)
    inked = (tink > 0.02) | (tmean > 0.1)
    pic = inked & ((tmid > 0.25) | (tdiag > 0.55) | (tmean > 0.5))
    txt = inked & ~pic & (tstripe > 0.6)
    n = nh * nw
    if not inked.any():
        return [0.0] * 13
    return [
        float(inked.mean()),
        float(pic.mean()),
        float(txt.mean()),
        float(pic.sum() / inked.sum()),
        _largest_component(pic) / n,
        _largest_component(inked & ~txt) / n,
        float(tmid[inked].mean()),
        float(tdiag[inked].mean()),
        float(np.quantile(tdiag[inked], 0.9)),
        float(np.quantile(tmid[inked], 0.9)),
        float(np.quantile(tstripe[inked], 0.1)),
        float(np.median(tstripe[inked])),
        float(tmean[inked].std()),
    ]


def _runs(ink: np.ndarray) -> np.ndarray:
    """Lengths of the runs of True along each row."""
    padded = np.zeros((ink.shape[0], ink.shape[1] + 2), dtype=np.int8)
    padded[:, 1:-1] = ink
    d = np.diff(padded.ravel())
    return np.flatnonzero(d == -1) - np.flatnonzero(d == 1)


def _run_stats(dark: np.ndarray) -> list[float]:
    """Ink in long (>= 24 px) row/column runs, mean/median run lengths, share of empty rows."""
    ink = dark > 0.5
    n_ink = max(int(ink.sum()), 1)
    hl, vl = _runs(ink), _runs(ink.T)
    return [
        float(hl[hl >= 24].sum() / n_ink),
        float(vl[vl >= 24].sum() / n_ink),
        float(hl.mean()) if hl.size else 0.0,
        float(vl.mean()) if vl.size else 0.0,
        float(np.median(hl)) if hl.size else 0.0,
        float(np.mean(dark.mean(axis=1) < 0.01)),
    ]


def _levels(grey: np.ndarray) -> tuple[float, float]:
    """Paper (90th pct) and ink (1st pct) levels from a 256-bin histogram."""
    hist = np.bincount(grey.astype(np.uint8).ravel(), minlength=256)
    cdf = np.cumsum(hist) / grey.size
    return float(np.searchsorted(cdf, 0.90)), float(np.searchsorted(cdf, 0.01))


def _periodicity(dark: np.ndarray, strips: int = 4) -> float:
    """How strongly the row-ink profile repeats (text lines), ink-weighted over strips."""
    h, w = dark.shape
    if h < 16:
        return 0.0
    n = 2 * h
    max_lag = max(4, h // 6)
    total, weight = 0.0, 0.0
    for s in range(strips):
        prof = dark[:, s * w // strips : (s + 1) * w // strips].mean(axis=1)
        prof = prof - prof.mean()
        energy = float(prof @ prof)
        if energy < 1e-6:
            continue
        spec = np.fft.rfft(prof, n)
        ac = np.fft.irfft(spec * np.conj(spec), n)[: max_lag + 1] / energy
        trough = np.minimum.accumulate(ac[1:max_lag])
        prom = float(np.max(ac[2 : max_lag + 1] - trough)) if max_lag > 2 else 0.0
        total += max(prom, 0.0) * energy
        weight += energy
    return total / weight if weight else 0.0


def _tile_periodicity(dark: np.ndarray) -> tuple[float, float]:
    """Local line periodicity in 64-px tiles: skew- and column-robust, unlike whole strips.

    Returns the ink-weighted mean periodicity and the page share of inked tiles whose
    rows do not repeat (a coarse figure-area estimate).
    """
    h, w = dark.shape
    nh, nw = h // TILE, w // TILE
    if nh == 0 or nw == 0:
        return 0.0, 0.0
    tiles = dark[: nh * TILE, : nw * TILE].reshape(nh, TILE, nw, TILE)
    prof = tiles.mean(axis=3).transpose(0, 2, 1).reshape(nh * nw, TILE)
    prof = prof - prof.mean(axis=1, keepdims=True)
    energy = (prof * prof).sum(axis=1)
    spec = np.fft.rfft(prof, 2 * TILE, axis=1)
    ac = np.fft.irfft(spec * np.conj(spec), 2 * TILE, axis=1)[:, :24] / (energy[:, None] + 1e-9)
    trough = np.minimum.accumulate(ac[:, 1:23], axis=1)
    prom = np.clip((ac[:, 2:24] - trough).max(axis=1), 0.0, None)
    ink = (tiles > 0.35).mean(axis=(1, 3)).reshape(-1)
    inked = ink > 0.02
    if not inked.any():
        return 0.0, 0.0
    period = float((prom * ink).sum() / ink.sum())
    aperiodic = float(np.mean(inked & (prom < 0.3)))
    return period, aperiodic


def _largest_component(mask: np.ndarray) -> int:
    """Size of the largest 4-connected group of True cells (grids are ~20x14, so plain BFS)."""
    seen = np.zeros_like(mask)
    best = 0
    nh, nw = mask.shape
    for i0, j0 in zip(*np.nonzero(mask), strict=True):
        if seen[i0, j0]:
            continue
        seen[i0, j0] = True
        stack, size = [(i0, j0)], 0
        while stack:
            i, j = stack.pop()
            size += 1
            for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                if 0 <= a < nh and 0 <= b < nw and mask[a, b] and not seen[a, b]:
                    seen[a, b] = True
                    stack.append((a, b))
        best = max(best, size)
    return best


def _trim_border(grey: np.ndarray) -> np.ndarray:
    """Cut dark scanner-bed margins: they look like a huge solid figure otherwise."""
    dark = grey < 0.5 * float(np.median(grey))
    h, w = grey.shape
    rows, cols = dark.mean(axis=1) > 0.6, dark.mean(axis=0) > 0.6
    top = _run(rows, h // 6)
    bottom = h - _run(rows[::-1], h // 6)
    left = _run(cols, w // 6)
    right = w - _run(cols[::-1], w // 6)
    return grey[top:bottom, left:right] if bottom - top >= BLOCK and right - left >= BLOCK else grey


def _run(flags: np.ndarray, limit: int) -> int:
    """Length of the leading run of True, capped at limit ."""
    n = int(np.argmin(flags)) if not flags.all() else len(flags)
    return n if n <= limit else limit


def _block_maps(dark: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per 16-px block: stripe ratio, variance, text mask, figure mask."""
    h, w = dark.shape
    nh, nw = max(h // BLOCK, 1), max(w // BLOCK, 1)
    blocks = dark[: nh * BLOCK, : nw * BLOCK].reshape(nh, BLOCK, nw, BLOCK)
    bvar = blocks.var(axis=(1, 3))
    row_var = blocks.mean(axis=3).var(axis=1)
    col_var = blocks.mean(axis=1).var(axis=2)
    stripe = row_var / (row_var + col_var + 1e-4)
    inked = ((blocks > 0.35).mean(axis=(1, 3)) > 0.04) | (blocks.mean(axis=(1, 3)) > 0.15)
    text = inked & (stripe > 0.7) & (bvar > 0.01)
    # a lone "figure" block among text is a heading or ragged line end, not a figure
    pad = np.pad(text, 1)
    neigh = pad[:-2, 1:-1].astype(int) + pad[2:, 1:-1] + pad[1:-1, :-2] + pad[1:-1, 2:]
    fig = inked & ~text & (neigh < 3)
    return stripe, bvar, text | (inked & ~fig), fig


def page_features(page: Image.Image) -> np.ndarray:
    """Feature vector in FEATURE_NAMES order; resolution-independent by construction."""
    grey, thumb = _working(page)
    colour_stats, colour = _colour_stats(thumb)
    grey = _trim_border(grey)
    paper, ink = _levels(grey)
    dark = np.clip((paper - grey) / max(paper - ink, 32.0), 0.0, 1.0)

    dx, dy = np.abs(np.diff(dark, axis=1)), np.abs(np.diff(dark, axis=0))
    gx, gy = dx.mean(), dy.mean()
    edges = float(np.mean(dy > 0.25))

    stripe, bvar, textlike, figlike = _block_maps(dark)
    inked = textlike | figlike
    n_blocks = max(stripe.size, 1)
    n_inked = max(int(inked.sum()), 1)

    mid_mask = (dark > 0.15) & (dark < 0.6)
    flat = np.zeros_like(mid_mask)
    flat[:, 1:] = dx < 0.05
    return np.array(
        [
            grey.std() / 64.0,
            float(np.mean(dark > 0.5)),
            float(np.mean(mid_mask)),
            paper / 255.0,
            (gy - gx) / (gy + gx + 1e-6),
            edges,
            _periodicity(dark),
            float((stripe * bvar).sum() / (bvar.sum() + 1e-6)),
            float(textlike.sum()) / n_inked,
            float(figlike.sum()) / n_blocks,
            _largest_component(figlike) / n_blocks,
            colour,
            float(np.mean(mid_mask & flat)),
            *_tile_periodicity(dark),
            *_picture_tiles(dark),
            *_run_stats(dark),
            *colour_stats,
        ],
        dtype=np.float64,
    )


@lru_cache(maxsize=1)
def load_model(path: str = str(MODEL_PATH)) -> dict:
    """Shipped coefficients; cached because every page needs them and the file is read-only."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def model_probability(feats: np.ndarray, model: dict) -> float:
    """Logistic regression on standardised features, as fitted by bench/fit_filter.py."""
    z = (feats - np.asarray(model["mean"])) / np.asarray(model["scale"])
    logit = float(z @ np.asarray(model["weights"]) + model["bias"])
    return float(1.0 / (1.0 + np.exp(-np.clip(logit, -50, 50))))


class PageFilter:
    """Base: subclasses set name/threshold and implement judge()."""

    name: str = ""
    threshold: float = 0.0

    def judge(self, page: Image.Image) -> Verdict:  # pragma: no cover - interface
        raise NotImplementedError


class StdFilter(PageFilter):
    """Seed rule, kept for comparison: grey std at the working size > threshold."""

    name = "std"

    def __init__(self, threshold: float = STD_THRESHOLD) -> None:
        self.threshold = float(threshold)

    def judge(self, page: Image.Image) -> Verdict:
        try:
            grey, _ = _working(page, colour=False)
            std = float(grey.std())
        except Exception as exc:  # never let one odd page stop an archive run
            return Verdict(False, 0.0, f"unreadable page ({type(exc).__name__})")
        if std > self.threshold:
            return Verdict(True, std, f"std {std:.1f} > {self.threshold:g}")
        return Verdict(False, std, f"std {std:.1f} <= {self.threshold:g}")


class FigureFilter(PageFilter):
    """A page is an illustration page when the figure finder keeps a picture on it.

    The default for ``--unit page``: on pages neither was tuned on (ufal, measure only,
    360-px previews) it keeps 74 of 94 picture pages against the layout model's 45, and
    drops 111 of 135 text pages against 122; both keep 36-39 of the 39 Moreno picture
    pages and drop all 120 DTA text pages.
    """

    name = "figures"

    def __init__(self, threshold: float | None = None, min_figure_area: float | None = None
                 ) -> None:
        self.threshold = float(figures.THRESHOLD if threshold is None else threshold)
        self.min_area = figures.DEFAULT_MIN_AREA if min_figure_area is None else min_figure_area

    def judge(self, page: Image.Image) -> Verdict:
        found = figures.candidates(page, self.min_area)
        best = max((r.score for r in found), default=0.0)
        n = sum(r.score >= self.threshold for r in found)
        if n:
            return Verdict(True, best, f"{n} figure(s), best {best:.2f}")
        return Verdict(False, best, "no figure" if not found else f"no figure (best {best:.2f})")


class ModelFilter(PageFilter):
    """Logistic regression on layout statistics, plus the optional figure-area floor."""

    name = "layout"

    def __init__(
        self,
        threshold: float | None = None,
        min_figure_area: float | None = None,
        model: dict | None = None,
    ) -> None:
        self.model = load_model() if model is None else model
        self.threshold = float(self.model["threshold"] if threshold is None else threshold)
        default_area = self.model.get("min_figure_area", 0.0)
        self.min_figure_area = float(default_area if min_figure_area is None else min_figure_area)

    def judge(self, page: Image.Image) -> Verdict:
        try:
            feats = page_features(page)
        except Exception as exc:
            return Verdict(False, 0.0, f"unreadable page ({type(exc).__name__})")
        names = FEATURE_NAMES
        if feats[names.index("fig_blocks")] == 0 and feats[names.index("text_blocks")] == 0:
            # no inked block at all: the model never saw such pages and extrapolates wildly
            return Verdict(False, 0.0, "blank page")
        p = model_probability(feats, self.model)
        area = float(feats[FEATURE_NAMES.index("fig_area")])
        if self.min_figure_area > 0 and area < self.min_figure_area:
            return Verdict(False, p, f"figure area {area:.2f} < {self.min_figure_area:g}")
        return self.decide(page, feats, p)

    def decide(self, page: Image.Image, feats: np.ndarray, p: float) -> Verdict:
        """The verdict once the page is readable, inked and big enough; subclasses refine p."""
        if p >= self.threshold:
            return Verdict(True, p, f"illustration p={p:.2f}")
        return Verdict(False, p, f"text p={p:.2f}")


def make_filter(
    name: str = "figures", threshold: float | None = None, min_figure_area: float | None = None
) -> PageFilter:
    """Build a filter by name; threshold None means its own."""
    if name == "std":
        return StdFilter(STD_THRESHOLD if threshold is None else threshold)
    if name == "figures":
        return FigureFilter(threshold, min_figure_area)
    if name == "layout":
        return ModelFilter(threshold, min_figure_area)
    raise ValueError(f"unknown filter {name!r}; choose one of {FILTER_NAMES}")
