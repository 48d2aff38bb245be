"""A learned verdict over the figure finder's own candidates, leave-one-source-out (#61 item 1).

    python -m bench.figure_learned           # 2 min cold on one core; cached in /tmp/figure_learned
    python -m bench.figure_learned --embed   # also an EfficientNet-Lite0 embedding (5 min cold)
    python -m bench.figure_learned --fresh   # find and measure every page again
    python -m bench.figure_learned --more    # also train on composites and text pages
                                             # (--embed --more: 4 min cold, 82 s warm)

Results and findings: docs/figure-finder.md, "A learned verdict, measured
leave-one-source-out".

Why: the issue's prototype scored a classifier over ``archive.figures``' candidates on the
sources it was fitted on, and its cut-off did not carry to a kind of scan it had not seen.
This bench asks the question the project's rule asks (a change ships only when no source
gets worse) with the sources kept apart: fit on two of ``figures/early``, ``figures/moreno``
and ``figures/other_sources``, score the third, which no fitted number has seen.

- Candidates: every region ``archive.figures.find`` lists on a page's preview (kept or
  not, read as ``bench.figure_eval`` reads it, with the reader's ``closer``). A candidate's
  label is 1 where it is the one a true picture box matches at IoU >= 0.5
  (``figure_eval.match`` over all candidates: the best one per picture), else 0.
- Each page five ways, all in its source's fold (a source's changed pages are never
  trained on when that source is scored): as published; binarized with Otsu at full
  resolution (a 1-bit page, previewed as MuPDF renders it); grey and low contrast (as
  ``bench.figure_robustness`` makes them, JPEG 90, the reader's DCT preview); and IIIF:
  a pyramid level halved from the scan down to 2x the preview, then plain bilinear
  (``cv2.INTER_LINEAR``, no antialias) to the preview size, the way an image server
  answers a size request.
- Features: the box in page fractions and against the page extent, area, aspect, size
  in text heights, the rule's kind and reason one-hot and its score; pixel statistics of
  the crop on the preview against the page's own paper and ink levels (ink shares, a
  text-line rhythm proxy, colour against the paper's, edge density, the ink's fill of the
  box, mirror symmetry both ways, a frame); the page's kind of scan. ``--embed`` adds an
  EfficientNet-Lite0 embedding of the crop (the vet's ImageNet weights), reduced to
  ``EMBED_DIMS`` by a PCA fitted on the training fold.
- Models: a logistic regression and a tiny MLP (torch, full batch), each source weighed
  equally. The threshold is chosen on the training sources, one per kind of scan (colour,
  grey, bilevel: read off the preview), maximising the mean over training sources of
  figure_eval's CV objective (pictures found >= 2% + crops that are pictures + text pages
  with no crop + median IoU). Of two kept boxes that overlap by half, the likelier stays.
- Hybrid: the rules' kept crops stay; the learned score may rescue a candidate the rules
  called ornament, initial or text block (its own threshold per kind of scan, chosen the
  same way).
- The rules' numbers are their own kept flags: nothing fitted.
- ``--more`` adds training-only sources, never scored: the composites ``bench.figure_eval``
  scores (``bench.composites``, 6 per layout and mode: Moreno woodcuts in DTA/OCR-D text
  pages, so never trained on when Moreno is scored) and those DTA/OCR-D text pages as
  negatives. Each is a source of its own, weighed like a real one in the fit and in the
  threshold choice (on the text pages the objective moves only with their clean share).

Costs are process CPU time on one core (``cv2.setNumThreads(1)``, ``torch.set_num_threads
(1)``): the finder, the features, the embedding, per page.
"""

from __future__ import annotations

import argparse
import io
import pickle
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
import torch
from PIL import Image

from archive import figures as F
from archive import reader
from archive.boxes import area
from bench import composites
from bench.figure_eval import (
    DATA,
    Box,
    Page,
    early_pages,
    jpeg_preview,
    load_preview,
    match,
    moreno_pages,
    other_pages,
    render_preview,
    score,
)

CACHE = Path("/tmp/figure_learned")
CACHE_VERSION = 1
SOURCES = ("early", "moreno", "other_sources")  # the scored folds
# ``--more``: training-only material, never a scored fold. The composites are Moreno's
# woodcuts set into DTA/OCR-D text pages, so they are not trained on when Moreno is scored;
# the text pages (the ones the composites are built on) are negatives: every candidate 0.
EXTRA = ("composites", "text_pages")
TIED = {"moreno": frozenset({"composites"})}
COMPOSITES_PER_CELL = 6  # as bench.figure_eval builds them (108 pages, 162 pictures)
VERSIONS = ("published", "otsu", "grey", "low_contrast", "iiif")
SCAN_KINDS = ("colour", "grey", "bilevel")
RESCUE = ("ornament", "initial", "text_block")  # what the hybrid may take back
REASON_CODES = ("", *F.REASONS)
THRESHOLDS = np.round(np.arange(0.02, 0.99, 0.02), 2)
SUPPRESS = 0.5  # a kept box with half its area inside a likelier kept box goes
EMBED_DIMS = 16
EMBED_SIDE = 224
Preview = tuple[Image.Image, F.Closer]


# --- pages --------------------------------------------------------------------------------


@dataclass
class Made(Page):
    """A composite as a page: its image is in memory, not under ``DATA``."""

    made: composites.Composite | None = None


def composite_pages() -> list[Page]:
    """The composites figure_eval scores, built the same way (seeded), truth exact."""
    return [Made(f"composites/{c.name}", c.layout, c.boxes, made=c)
            for c in composites.build(per_cell=COMPOSITES_PER_CELL)]


def text_pages() -> list[Page]:
    """The DTA and OCR-D text pages the composites are built on: no picture on any."""
    return [Page(str(p.relative_to(DATA)), p.parent.name, []) for p in composites.text_pages()]


PAGES: dict[str, Callable[[], list[Page]]] = {
    "early": early_pages, "moreno": moreno_pages, "other_sources": other_pages,
    "composites": composite_pages, "text_pages": text_pages}


# --- the five ways a page comes -------------------------------------------------------------


def _jpeg(a: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(a).save(out, "JPEG", quality=90)
    return out.getvalue()


def _grey(a: np.ndarray) -> np.ndarray:
    return np.repeat(cv2.cvtColor(a, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)


def _low_contrast(a: np.ndarray) -> np.ndarray:
    return (a * 0.55 + 60).astype(np.uint8)  # as bench.figure_robustness's "low contrast"


def _iiif(a: np.ndarray, side: int) -> Image.Image:
    """What an image server answers for the reader's preview size: a pyramid level (each
    halved by a box filter) no smaller than twice the size, then plain bilinear."""
    h, w = a.shape[:2]
    tw, th = reader._dct_size(w, h, side)
    level = a
    while level.shape[1] // 2 >= 2 * tw and level.shape[0] // 2 >= 2 * th:
        level = cv2.resize(level, (level.shape[1] // 2, level.shape[0] // 2),
                           interpolation=cv2.INTER_AREA)
    return Image.fromarray(cv2.resize(level, (tw, th), interpolation=cv2.INTER_LINEAR))


def way_in(page: Page, version: str) -> Preview:
    """The page's preview made the ``version`` way, with the ``closer`` that way gives."""
    path = DATA / page.name
    made = page.made if isinstance(page, Made) else None
    if version == "published":
        if made is not None:
            return made.preview(), made.preview
        return load_preview(path), page.closer()
    if made is not None:
        a = np.asarray(made.image.convert("RGB"))
    else:
        with Image.open(path) as im:
            a = np.asarray(im.convert("RGB"))
    if version in ("grey", "low_contrast"):
        data = _jpeg(_grey(a) if version == "grey" else _low_contrast(a))
        return jpeg_preview(data), lambda side: jpeg_preview(data, side)
    if version == "otsu":
        g = cv2.cvtColor(a, cv2.COLOR_RGB2GRAY)
        _t, bw = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        img = Image.fromarray(bw).convert("1")
        return render_preview(img), lambda side: render_preview(img, side)
    if version == "iiif":
        return _iiif(a, F.PREVIEW_SIDE), lambda side: _iiif(a, side)
    raise KeyError(version)


# --- what the finder lists, and what is measured on it -------------------------------------


@dataclass
class Seen:
    """One page one way: the finder's candidates, their labels and features."""

    source: str
    version: str
    name: str
    truth: list[Box]
    scan_kind: str
    regions: list[F.Region]
    labels: np.ndarray
    feats: np.ndarray  # (candidates, features)
    find_ms: float
    feat_ms: float
    embed: np.ndarray | None = None
    embed_ms: float = 0.0
    extra: dict = field(default_factory=dict)


def chroma_of(rgb: np.ndarray) -> np.ndarray:
    """Max minus min of the channels, per pixel (cv2: numpy's reduction over the channel
    axis costs a page 4 ms)."""
    r, g, b = cv2.split(rgb)
    return cv2.subtract(cv2.max(cv2.max(r, g), b), cv2.min(cv2.min(r, g), b))


def scan_kind(rgb: np.ndarray) -> str:
    """Colour, grey or bilevel, read off the preview: colour where the pixels' chroma is
    more than JPEG noise; bilevel where a grey page's paper is pure white."""
    if float(chroma_of(rgb).mean()) > 6.0:
        return "colour"
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    return "bilevel" if float((grey >= 250).mean()) > 0.3 else "grey"


def _percentile(values: np.ndarray, q: float) -> float:
    """A percentile of uint8 values, by their histogram (a sort costs a page 5 ms)."""
    cum = np.cumsum(np.bincount(values.ravel(), minlength=256))
    return float(np.searchsorted(cum, q / 100 * cum[-1]))


def _levels(grey: np.ndarray) -> tuple[float, float]:
    """The page's paper level and its darkest ink (high and low percentiles)."""
    return _percentile(grey, 90), _percentile(grey, 1)


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a - a.mean(), b - b.mean()
    d = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum()) / d if d > 0 else 0.0


def pixel_stats(grey: np.ndarray, chroma: np.ndarray, box: Box, paper: float, dark: float,
                paper_chroma: float) -> list[float]:
    """Cheap measurements of the crop on the preview, relative to the page's levels."""
    h, w = grey.shape
    x0, y0 = int(box[0] * w), int(box[1] * h)
    x1, y1 = max(x0 + 1, int(np.ceil(box[2] * w))), max(y0 + 1, int(np.ceil(box[3] * h)))
    g = grey[y0:y1, x0:x1].astype(np.float32)
    c = chroma[y0:y1, x0:x1].astype(np.float32)
    span = max(8.0, paper - dark)
    depth = np.clip((paper - g) / span, 0, 1)  # 0 at the paper, 1 at the darkest ink
    strong, weak = depth > 0.5, depth > 0.15
    rows, cols = strong.mean(axis=1), strong.mean(axis=0)
    if g.shape[0] > 2 and g.shape[1] > 2:
        gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
        edges = float((np.hypot(gx, gy)[1:-1, 1:-1] > 0.5 * span).mean())
    else:
        edges = 0.0
    ys, xs = np.nonzero(strong)
    fill = (((ys.max() - ys.min() + 1) * (xs.max() - xs.min() + 1)) / strong.size
            if len(ys) else 0.0)
    rim = np.ones_like(strong)
    rim[2:-2, 2:-2] = False
    return [float(strong.mean()), float(weak.mean()), float(depth.mean()), float(depth.std()),
            float((rows < 0.03).mean()), float((cols < 0.03).mean()),
            float(np.abs(np.diff(rows)).mean()) if len(rows) > 1 else 0.0,
            float((c.mean() - paper_chroma) / 64.0),
            float((c > paper_chroma + 25).mean()), edges, float(fill),
            _corr(depth, depth[:, ::-1]), _corr(depth, depth[::-1, :]),
            float(strong[rim].mean()) if rim.any() else 0.0]


PIXEL_NAMES = ("ink_strong", "ink_weak", "depth_mean", "depth_std", "blank_rows",
               "blank_cols", "row_rhythm", "chroma_over_paper", "coloured_share", "edges",
               "ink_fill", "mirror_lr", "mirror_tb", "rim_ink")
GEOMETRY = 23  # the geometric measurements of ``features``
N_FEATS = GEOMETRY + len(F.KINDS) + len(REASON_CODES) + 3 + len(PIXEL_NAMES) + len(SCAN_KINDS)


def features(found: F.Finding, rgb: np.ndarray, kind: str) -> np.ndarray:
    """One row per candidate: geometry, the rule's verdict, pixel statistics, the page."""
    grey = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    h, w = grey.shape
    px0, py0, px1, py1 = found.page
    inside = grey[int(py0 * h):max(int(py0 * h) + 1, int(py1 * h)),
                  int(px0 * w):max(int(px0 * w) + 1, int(px1 * w))]
    paper, dark = _levels(inside)
    chroma = chroma_of(rgb)
    paper_chroma = _percentile(chroma, 50)
    pw, ph = max(1e-6, px1 - px0), max(1e-6, py1 - py0)
    long_side = max(w, h)
    th = found.text_height
    n, n_kept = len(found.regions), sum(r.kept for r in found.regions)
    rows = []
    for r in found.regions:
        x0, y0, x1, y1 = r.box
        bw, bh = max(1e-6, x1 - x0), max(1e-6, y1 - y0)
        in_page = area((max(x0, px0), max(y0, py0), min(x1, px1), min(y1, py1))) \
            if x1 > px0 and x0 < px1 and y1 > py0 and y0 < py1 else 0.0
        size_th = [np.log1p(bw * w / long_side / th), np.log1p(bh * h / long_side / th)] \
            if th > 0 else [0.0, 0.0]
        geo = [x0, y0, x1, y1, (x0 + x1) / 2, (y0 + y1) / 2, bw, bh, np.sqrt(area(r.box)),
               (x0 - px0) / pw, (y0 - py0) / ph, (x1 - px0) / pw, (y1 - py0) / ph,
               np.sqrt(area(r.box) / (pw * ph)), in_page / max(1e-9, area(r.box)),
               np.log(bw * w / (bh * h)), *size_th, float(th == 0),
               np.log1p(1 / th) if th > 0 else 0.0, pw * ph, n, n_kept]
        rule = [float(r.kind == k) for k in F.KINDS] + \
            [float(r.reason == c) for c in REASON_CODES] + [r.score, float(r.kept),
                                                            float(r.turned != 0)]
        page = [float(kind == k) for k in SCAN_KINDS]
        rows.append(geo + rule + pixel_stats(grey, chroma, r.box, paper, dark, paper_chroma)
                    + page)
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), N_FEATS)


def labels_of(truth: list[Box], regions: list[F.Region]) -> np.ndarray:
    y = np.zeros(len(regions), dtype=np.float32)
    for _i, j, _v in match(truth, [r.box for r in regions]):
        y[j] = 1.0
    return y


def see(source: str, version: str, page: Page) -> Seen:
    preview, closer = way_in(page, version)
    t = time.process_time()
    found = F.find(preview, closer=closer)
    t1 = time.process_time()
    rgb = np.asarray(preview.convert("RGB"))
    feats = features(found, rgb, kind := scan_kind(rgb))
    t2 = time.process_time()
    return Seen(source, version, page.name, page.truth, kind, found.regions,
                labels_of(page.truth, found.regions), feats, (t1 - t) * 1000,
                (t2 - t1) * 1000, extra={"preview": preview, "closer": closer})


# --- the embedding -----------------------------------------------------------------------


def lite0() -> torch.nn.Module:
    from vet.convert import imagenet_model

    return imagenet_model()


def embed(model: torch.nn.Module, s: Seen) -> tuple[np.ndarray, float]:
    """The pooled Lite0 features of each candidate, cut from a decode at twice the
    preview's side (as the pipeline would cut from its page decode); ms of the forward
    passes and the cuts, one thread."""
    closer = s.extra["closer"]
    t = time.process_time()
    big = closer(2 * F.PREVIEW_SIDE) or s.extra["preview"]
    big = big.convert("RGB")
    w, h = big.size
    crops = []
    for r in s.regions:
        x0, y0, x1, y1 = r.box
        box = (int(x0 * w), int(y0 * h), max(int(x0 * w) + 1, int(np.ceil(x1 * w))),
               max(int(y0 * h) + 1, int(np.ceil(y1 * h))))
        crop = big.crop(box).resize((EMBED_SIDE, EMBED_SIDE), Image.Resampling.BILINEAR)
        crops.append(np.asarray(crop))
    if not crops:
        return np.zeros((0, 1280), np.float32), (time.process_time() - t) * 1000
    x = torch.from_numpy(np.stack(crops)).permute(0, 3, 1, 2).float() / 255.0
    with torch.no_grad():
        pooled = model((x - 0.5) / 0.5).pooled.numpy()
    return pooled.astype(np.float32), (time.process_time() - t) * 1000


# --- the cache ------------------------------------------------------------------------------


def _path(source: str, version: str, what: str) -> Path:
    return CACHE / f"v{CACHE_VERSION}_{source}_{version}_{what}.pkl"


def collect(fresh: bool, with_embed: bool, sources: tuple[str, ...] = SOURCES) -> list[Seen]:
    """Every page of every source, five ways, from the cache where it is there (a source's
    pages are only listed, or built, when something of it is not)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    model = None
    out: list[Seen] = []
    for source in sources:
        listed: list[Page] = []

        def pages(source: str = source, listed: list[Page] = listed) -> list[Page]:
            if not listed:
                listed += PAGES[source]()
            return listed
        for version in VERSIONS:
            path = _path(source, version, "seen")
            epath = _path(source, version, "embed")
            if path.exists() and not fresh:
                seen = [Seen(**d) for d in pickle.loads(path.read_bytes())]
            else:
                t = time.time()
                seen = [see(source, version, p) for p in pages()]
                print(f"  {source} {version}: {len(seen)} pages in {time.time() - t:.0f} s",
                      flush=True)
                _save(path, seen)
            if with_embed:
                if epath.exists() and not fresh:
                    for s, (e, ms) in zip(seen, pickle.loads(epath.read_bytes()),
                                          strict=True):
                        s.embed, s.embed_ms = e, ms
                else:
                    if model is None:
                        model = lite0()
                    if "closer" not in seen[0].extra:  # loaded without previews
                        for s, p in zip(seen, pages(), strict=True):
                            s.extra["preview"], s.extra["closer"] = way_in(p, version)
                    t = time.time()
                    for s in seen:
                        s.embed, s.embed_ms = embed(model, s)
                    print(f"  {source} {version}: embedded in {time.time() - t:.0f} s",
                          flush=True)
                    epath.write_bytes(pickle.dumps([(s.embed, s.embed_ms) for s in seen]))
            for s in seen:
                s.extra = {}
            out += seen
    return out


def _save(path: Path, seen: list[Seen]) -> None:
    """Plain fields, so the cache reads the same run as a module or imported."""
    path.write_bytes(pickle.dumps([{**vars(s), "extra": {}} for s in seen]))


# --- models ---------------------------------------------------------------------------------


class Scaler:
    def __init__(self, x: np.ndarray) -> None:
        self.mean = x.mean(axis=0)
        self.std = x.std(axis=0) + 1e-6

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.std


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, hidden: int = 0,
        decay: float = 1e-2, seed: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """A logistic regression (``hidden`` 0, L-BFGS) or a one-hidden-layer MLP (Adam),
    weighted binary cross-entropy with an L2 penalty; returns the probability."""
    torch.manual_seed(seed)
    scale = Scaler(x)
    xt = torch.from_numpy(scale(x).astype(np.float32))
    yt, wt = torch.from_numpy(y), torch.from_numpy((w / w.sum()).astype(np.float32))
    d = x.shape[1]
    net = (torch.nn.Linear(d, 1) if not hidden else
           torch.nn.Sequential(torch.nn.Linear(d, hidden), torch.nn.ReLU(),
                               torch.nn.Dropout(0.2), torch.nn.Linear(hidden, 1)))
    params = list(net.parameters())

    def loss() -> torch.Tensor:
        z = net(xt).squeeze(1)
        bce = torch.nn.functional.binary_cross_entropy_with_logits(z, yt, reduction="none")
        l2 = sum((p * p).sum() for p in params if p.dim() > 1)
        return (bce * wt).sum() + decay * l2 / len(y) * 100

    if not hidden:
        opt = torch.optim.LBFGS(params, lr=0.5, max_iter=200, line_search_fn="strong_wolfe")

        def closure() -> torch.Tensor:
            opt.zero_grad()
            v = loss()
            v.backward()
            return v
        opt.step(closure)
    else:
        opt = torch.optim.Adam(params, lr=1e-2)
        net.train()
        for _ in range(400):
            opt.zero_grad()
            loss().backward()
            opt.step()
    net.eval()

    def predict(xn: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            z = net(torch.from_numpy(scale(xn).astype(np.float32))).squeeze(1)
        return torch.sigmoid(z).numpy()
    return predict


def pca(x: np.ndarray, k: int) -> Callable[[np.ndarray], np.ndarray]:
    mean = x.mean(axis=0)
    _u, _s, vt = np.linalg.svd(x - mean, full_matrices=False)
    basis = vt[:k].T
    return lambda z: (z - mean) @ basis


# --- verdicts and scores ----------------------------------------------------------------------


def suppressed(boxes: list[Box], order: list[int]) -> list[int]:
    """The indices kept, likeliest first, of boxes not half inside a likelier kept one."""
    kept: list[int] = []
    for i in order:
        b = boxes[i]
        if all(_inside(b, boxes[j]) < SUPPRESS and _inside(boxes[j], b) < SUPPRESS
               for j in kept):
            kept.append(i)
    return kept


def _inside(part: Box, box: Box) -> float:
    ix = max(0.0, min(part[2], box[2]) - max(part[0], box[0]))
    iy = max(0.0, min(part[3], box[3]) - max(part[1], box[1]))
    return ix * iy / max(1e-12, area(part))


def learned_boxes(s: Seen, p: np.ndarray, thr: float) -> list[Box]:
    boxes = [r.box for r in s.regions]
    order = [i for i in np.argsort(-p, kind="stable") if p[i] >= thr]
    return [boxes[i] for i in suppressed(boxes, order)]


def hybrid_boxes(s: Seen, p: np.ndarray, thr: float) -> list[Box]:
    """The rules' crops, and the candidates they called ornament, initial or text block
    that the learned score takes back, unless half inside a crop already kept."""
    boxes = [r.box for r in s.regions]
    rules = [i for i, r in enumerate(s.regions) if r.kept]
    rescue = [i for i in np.argsort(-p, kind="stable")
              if not s.regions[i].kept and s.regions[i].reason in RESCUE and p[i] >= thr]
    return [boxes[i] for i in suppressed(boxes, rules + rescue)]


def rule_boxes(s: Seen) -> list[Box]:
    return [r.box for r in s.regions if r.kept]


def objective(st: dict[str, float]) -> float:
    """figure_eval's CV objective."""
    return st["recall2"] + st["precision"] + st["text_clean"] + st["median_iou"]


Verdict = Callable[[Seen, np.ndarray, float], list[Box]]


def choose(seen: list[Seen], probs: list[np.ndarray], verdict: Verdict) -> dict[str, float]:
    """A threshold per kind of scan, chosen on the training pages of that kind: the best
    mean objective over the training sources (each weighed alike); one over all pages of
    every kind where a kind has no training page."""
    def best(idx: list[int]) -> float:
        by_src: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            by_src[seen[i].source].append(i)
        vals = []
        for t in THRESHOLDS:
            vals.append(np.mean([objective(score((seen[i].truth, verdict(seen[i], probs[i], t))
                                                 for i in ids)) for ids in by_src.values()]))
        top = max(vals)  # ties: the middle of the best run, not its edge
        run = [t for t, v in zip(THRESHOLDS, vals, strict=True) if v >= top - 1e-9]
        return float(run[len(run) // 2])
    every = list(range(len(seen)))
    default = best(every)
    out = {}
    for kind in SCAN_KINDS:
        idx = [i for i in every if seen[i].scan_kind == kind]
        out[kind] = best(idx) if idx else default
    return out


# --- leave one source out -------------------------------------------------------------------


@dataclass
class Model:
    name: str
    hidden: int = 0
    embedded: bool = False
    columns: str = "all"  # or "verdict+geometry": no pixel statistics
    decay: float = 1e-2


_RULE_END = GEOMETRY + len(F.KINDS) + len(REASON_CODES) + 3
COLUMNS = {"all": np.arange(N_FEATS),
           "verdict+geometry": np.r_[0:_RULE_END, N_FEATS - len(SCAN_KINDS):N_FEATS]}


def design(seen: list[Seen], embedded: bool, reduce: Callable | None,
           columns: str = "all") -> np.ndarray:
    x = np.concatenate([s.feats for s in seen])[:, COLUMNS[columns]]
    if embedded:
        e = np.concatenate([s.embed for s in seen])
        x = np.concatenate([x, reduce(e)], axis=1)
    return x


def loso(seen: list[Seen], model: Model) -> tuple[dict, dict]:
    """Per left-out source: the probabilities of its candidates and the thresholds the
    other sources chose (learned and hybrid)."""
    probs: dict[int, np.ndarray] = {}
    chosen: dict[str, dict] = {}
    for held in SOURCES:
        train = [s for s in seen if s.source != held and s.source not in TIED.get(held, ())]
        test_idx = [i for i, s in enumerate(seen) if s.source == held]
        reduce = None
        if model.embedded:
            reduce = pca(np.concatenate([s.embed for s in train]), EMBED_DIMS)
        x = design(train, model.embedded, reduce, model.columns)
        y = np.concatenate([s.labels for s in train])
        counts = defaultdict(int)
        for s in train:
            counts[s.source] += len(s.labels)
        w = np.concatenate([np.full(len(s.labels), 1.0 / counts[s.source]) for s in train])
        predict = fit(x, y, w, hidden=model.hidden, decay=model.decay)

        def prob(s: Seen, predict: Callable = predict, reduce: Callable | None = reduce
                 ) -> np.ndarray:
            if not len(s.labels):
                return np.zeros(0, np.float32)
            return predict(design([s], model.embedded, reduce, model.columns))
        train_p = [prob(s) for s in train]
        chosen[held] = {"learned": choose(train, train_p, learned_boxes),
                        "hybrid": choose(train, train_p, hybrid_boxes)}
        for i in test_idx:
            probs[i] = prob(seen[i])
    return probs, chosen


def boxes_for(variant: str, s: Seen, p: np.ndarray | None, thr: dict | None) -> list[Box]:
    if variant == "rules":
        return rule_boxes(s)
    t = thr[variant][s.scan_kind]
    return (learned_boxes if variant == "learned" else hybrid_boxes)(s, p, t)


def table(title: str, cells: dict[tuple[str, str], dict[str, float]],
          base: dict[tuple[str, str], dict[str, float]] | None) -> list[str]:
    """A markdown table, one row per source and way in; where ``base`` is given, each
    number that falls below the rules' is marked with a minus."""
    lines = [f"**{title}**", "",
             "| source | way in | pictures found | median IoU | crops that are pictures | "
             "text pages with no crop |", "|---|---|---|---|---|---|"]
    for (src, ver), st in cells.items():
        b = base[src, ver] if base else None

        def mark(key: str, text: str, st: dict = st, b: dict | None = b) -> str:
            return text + (" −" if b and st[key] < b[key] - 1e-9 else "")
        found = f"{st['recall']:.1%} of {st['pictures']}"
        tight = f"{st['median_iou']:.2f}"
        crops = f"{st['precision']:.1%} of {st['kept']}"
        clean = f"{st['text_clean']:.1%} of {st['text_pages']}"
        lines.append(f"| {src} | {ver} | {mark('recall', found)} | "
                     f"{mark('median_iou', tight)} | {mark('precision', crops)} | "
                     f"{mark('text_clean', clean)} |")
    return lines


def side_by_side(cells: dict[str, dict[tuple[str, str], dict[str, float]]]) -> list[str]:
    """One row per source and way in, one column per variant: found / median IoU / crops
    that are pictures / text pages with no crop, − where below the rules, + above."""
    names = list(cells)
    lines = ["| source | way in | " + " | ".join(names) + " |",
             "|---|---|" + "---|" * len(names)]
    for key, base in cells["rules"].items():
        row = []
        for name in names:
            st = cells[name][key]
            parts = []
            for k, f in (("recall", "{:.0%}"), ("median_iou", "{:.2f}"),
                         ("precision", "{:.0%}"), ("text_clean", "{:.0%}")):
                mark = "" if name == "rules" else (
                    "−" if st[k] < base[k] - 1e-9 else "+" if st[k] > base[k] + 1e-9 else "")
                parts.append(f.format(st[k]) + mark)
            row.append(" / ".join(parts))
        lines.append(f"| {key[0]} | {key[1]} | " + " | ".join(row) + " |")
    return lines


def summary(rows: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """One row per variant, one column per source: the five ways in pooled, as
    found / median IoU / crops that are pictures / text pages with no crop."""
    lines = ["| variant | " + " | ".join(SOURCES) + " |", "|---|" + "---|" * len(SOURCES)]
    base = rows["rules"]
    for name, by in rows.items():
        cells = []
        for src in SOURCES:
            st, b = by[src], base[src]
            parts = []
            for key, f in (("recall", "{:.1%}"), ("median_iou", "{:.2f}"),
                           ("precision", "{:.1%}"), ("text_clean", "{:.1%}")):
                mark = "−" if st[key] < b[key] - 1e-9 else ("+" if st[key] > b[key] + 1e-9
                                                            else "")
                parts.append(f.format(st[key]) + (mark if name != "rules" else ""))
            cells.append(" / ".join(parts))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def average_precision(y: np.ndarray, p: np.ndarray) -> float:
    """Average precision of a ranking of candidates (ties broken by order)."""
    order = np.argsort(-p, kind="stable")
    hits = y[order]
    if not hits.sum():
        return 0.0
    prec = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float((prec * hits).sum() / hits.sum())


def ranking(seen: list[Seen], probs: dict[int, np.ndarray]) -> list[str]:
    """Per left-out source (five ways pooled): the average precision of the rules' own
    score and of the learned one over the candidates, and what the learned verdict would
    score with the threshold chosen on the left-out source itself (per kind of scan): an
    upper bound that says how much of the loss is the cut-off and how much the ranking."""
    out = []
    for src in SOURCES:
        idx = [i for i, s in enumerate(seen) if s.source == src and len(s.labels)]
        y = np.concatenate([seen[i].labels for i in idx])
        rule = np.concatenate([[r.score for r in seen[i].regions] for i in idx])
        learned = np.concatenate([probs[i] for i in idx])
        mine = [s for s in seen if s.source == src]
        mp = [probs[i] for i, s in enumerate(seen) if s.source == src]
        oracle = choose(mine, mp, learned_boxes)
        st = score((s.truth, learned_boxes(s, q, oracle[s.scan_kind]))
                   for s, q in zip(mine, mp, strict=True))
        out.append(f"    {src}: AP rules' score {average_precision(y, rule):.3f}, learned "
                   f"{average_precision(y, learned):.3f}; cut-off chosen on {src} itself "
                   f"(" + "/".join(f"{oracle[k]:.2f}" for k in SCAN_KINDS) + f"): found "
                   f"{st['recall']:.1%}, median IoU {st['median_iou']:.2f}, crops that are "
                   f"pictures {st['precision']:.1%}, text pages with no crop "
                   f"{st['text_clean']:.1%}")
    return out


def worse(cells: dict, base: dict, keys: tuple[str, ...] = ("recall", "precision",
                                                              "text_clean")) -> list[str]:
    """Where a variant falls below the rules: (source, way in, number)."""
    return [f"{src}/{ver} {k} {base[src, ver][k]:.3f}->{st[k]:.3f}"
            for (src, ver), st in cells.items() for k in keys
            if st[k] < base[src, ver][k] - 1e-9]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fresh", action="store_true", help="ignore the cache")
    ap.add_argument("--embed", action="store_true", help="also an EfficientNet-Lite0 embedding")
    ap.add_argument("--more", action="store_true",
                    help="also train on the composites (not when Moreno is scored) and the "
                         "DTA/OCR-D text pages as negatives; still scored on the three sources")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    t0 = time.time()
    seen = collect(args.fresh, args.embed, SOURCES + EXTRA if args.more else SOURCES)
    print(f"{len(seen)} pages x ways, {sum(len(s.labels) for s in seen)} candidates "
          f"({time.time() - t0:.0f} s to collect); training on "
          + ("the other real sources, the composites (not for moreno) and the text pages"
             if args.more else "the other two real sources"))
    report_pages(seen)
    models = [Model("logistic regression"), Model("MLP (32 hidden)", hidden=32),
              Model("logistic regression, verdict and geometry only",
                    columns="verdict+geometry"),
              Model("logistic regression, 100x the L2 penalty", decay=1.0)]
    if args.embed:
        models.append(Model("logistic regression + Lite0 embedding", embedded=True))
    cells_of = defaultdict(lambda: defaultdict(list))
    keys = [(src, ver) for src in SOURCES for ver in VERSIONS]
    for s in seen:
        cells_of[s.source, s.version]["rules"].append((s.truth, rule_boxes(s)))
    base = {k: score(cells_of[k]["rules"]) for k in keys}
    out = table("rules (the finder's own kept flags; nothing fitted)", base, None)
    pooled = {"rules": {src: score((s.truth, rule_boxes(s)) for s in seen if s.source == src)
                        for src in SOURCES}}
    verdicts = []
    side = {"rules": base}
    for model in models:
        t = time.time()
        probs, chosen = loso(seen, model)
        for variant in ("learned", "hybrid"):
            cells = {k: score((s.truth, boxes_for(variant, s, probs[i], chosen[s.source]))
                              for i, s in enumerate(seen) if (s.source, s.version) == k)
                     for k in keys}
            name = f"{variant}, {model.name}"
            if model is models[0]:
                side[name] = cells
            pooled[name] = {src: score(
                (s.truth, boxes_for(variant, s, probs[i], chosen[s.source]))
                for i, s in enumerate(seen) if s.source == src) for src in SOURCES}
            out += ["", *table(f"{name} (leave-one-source-out; thresholds colour/grey/bilevel "
                               "per left-out source: " + "; ".join(
                                   f"{h} " + "/".join(f"{chosen[h][variant][k]:.2f}"
                                                      for k in SCAN_KINDS) for h in SOURCES)
                               + ")", cells, base)]
            bad = worse(cells, base)
            said = ("no number worse than the rules" if not bad
                    else f"{len(bad)} numbers worse: " + ", ".join(bad))
            verdicts.append(f"{name}: {said}")
        print(f"  {model.name}: fitted and scored in {time.time() - t:.0f} s", flush=True)
        print("\n".join(ranking(seen, probs)), flush=True)
    print("\n".join(out))
    print(f"\nThe rules beside the {models[0].name} (found / median IoU / crops that are "
          "pictures / text pages with no crop; − below the rules, + above):\n")
    print("\n".join(side_by_side(side)))
    print("\nThe five ways in pooled, per left-out source (found / median IoU / crops that are "
          "pictures / text pages with no crop; − below the rules, + above):\n")
    print("\n".join(summary(pooled)))
    print("\nDoes any variant leave no source worse (found, crops that are pictures, text "
          "pages with no crop, every way in)?")
    print("\n".join(f"  {v}" for v in verdicts))
    report_cost([s for s in seen if s.source in SOURCES], args.embed)
    print(f"total {time.time() - t0:.0f} s")


def report_pages(seen: list[Seen]) -> None:
    """Scan kinds read per way in, and proposal recall (any candidate at IoU >= 0.5)."""
    print("| source | way in | pages | colour/grey/bilevel | proposal recall | rules' recall |")
    print("|---|---|---|---|---|---|")
    for src in dict.fromkeys(s.source for s in seen):
        for ver in VERSIONS:
            ss = [s for s in seen if (s.source, s.version) == (src, ver)]
            kinds = "/".join(str(sum(s.scan_kind == k for s in ss)) for k in SCAN_KINDS)
            n = sum(len(s.truth) for s in ss)
            prop = sum(int(s.labels.sum()) for s in ss)
            rules = sum(len(match(s.truth, rule_boxes(s))) for s in ss)
            print(f"| {src} | {ver} | {len(ss)} | {kinds} | {prop}/{n} | {rules}/{n} |")
    print()
    for src in dict.fromkeys(s.source for s in seen):
        why = Counter(r.reason for s in seen if s.source == src
                      for r, y in zip(s.regions, s.labels, strict=True) if y and not r.kept)
        print(f"  {src}, pictures a candidate matches that the rules do not keep, by reason "
              f"(five ways in): {dict(why.most_common())}")
    print()


def report_cost(seen: list[Seen], embedded: bool) -> None:
    finder = np.array([s.find_ms for s in seen])
    feats = np.array([s.feat_ms for s in seen])
    cands = np.array([len(s.labels) for s in seen])
    print(f"\nCost per page, one core (process CPU), {len(seen)} pages: finder p50 "
          f"{np.median(finder):.1f} ms (mean {finder.mean():.1f}); features p50 "
          f"{np.median(feats):.2f} ms (mean {feats.mean():.2f}); "
          f"{cands.mean():.2f} candidates a page")
    if embedded:
        em = np.array([s.embed_ms for s in seen])
        per = em.sum() / max(1, cands.sum())
        print(f"  Lite0 embedding at {EMBED_SIDE} px: p50 {np.median(em):.1f} ms a page, "
              f"mean {em.mean():.1f} ms ({per:.1f} ms a candidate, cut included)")


if __name__ == "__main__":
    main()
