"""How far archive.figures holds when a scan is made differently: another library's camera,
light, paper, compression or resolution.

    python -m bench.figure_robustness [--source early|moreno|both] [--only NAME ...]
                                      [--param small_h=20 ...] [--skew 3 -3 5 ...] [--cut]
                                      [--focus] [--gutter] [--frame]

The held-out library scans come from scanners and settings this project never sees. Every
labelled page of ``figures/early`` (and the Moreno chapbooks) is changed the way another
library's scan might differ: exposure, white balance, grey, low contrast, a light falloff,
sensor noise, harsh JPEG, JPEG 2000 as archive.org stores its scans, half or double the
resolution, a small skew, a page printed across the book (turned a quarter); with
``--focus`` also a soft focus (alone, and with another of the changes) and a library's
sharpening, with ``--gutter`` a shadow down one side (a page curving into the gutter),
with ``--frame`` the page small on a copy stand's bed. Then it
goes through the reader's own preview path (JPEG bytes decoded at the smallest DCT
scale, as ``bench.figure_eval``; JPEG 2000 at the coarsest wavelet level) and the
shipped finder. Scores as ``bench.figure_eval`` with the shipped
PARAMS (no CV: nothing is chosen here), per change, then the mean and the worst over the
changes (the two controls left out: as published, and re-encoded with no change). "Pages
that changed" keep another number of crops than as published. A method that generalises
keeps its numbers; a drop names a page property the rules lean on. Test use only: never
tune on it (``--param`` shows what a constant does to it, no more).
"""

from __future__ import annotations

import argparse
import io
import re
from collections.abc import Callable

import cv2
import numpy as np
from PIL import Image
from tqdm import tqdm

from archive import figures as F
from archive import reader
from bench.figure_eval import (
    BY_EYE,
    DATA,
    Box,
    Page,
    as_cut,
    early_pages,
    jpeg_preview,
    moreno_pages,
    score,
    with_by_eye,
)
from bench.image_changes import Change, gamma, noise, tint
from bench.magazine import jpx_bytes


def _grey(a: np.ndarray) -> np.ndarray:
    return np.repeat(cv2.cvtColor(a, cv2.COLOR_RGB2GRAY)[..., None], 3, axis=2)


def _contrast(a: np.ndarray) -> np.ndarray:
    return (a * 0.55 + 60).astype(np.uint8)


def _falloff(a: np.ndarray) -> np.ndarray:
    """A light that falls off towards the corners (35% darker there), as under one lamp."""
    h, w = a.shape[:2]
    y, x = np.mgrid[0:h, 0:w]
    r2 = ((x - w / 2) / (w / 2)) ** 2 + ((y - h / 2) / (h / 2)) ** 2
    return np.clip(a * (1 - 0.175 * r2)[..., None], 0, 255).astype(np.uint8)


def _scale(f: float) -> Change:
    def go(a: np.ndarray) -> np.ndarray:
        h, w = a.shape[:2]
        size = (round(w * f), round(h * f))
        return cv2.resize(a, size, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_CUBIC)
    return go


def _blur(px: float) -> Change:
    """Soft focus: a Gaussian blur of ``px`` pixels a 1,000 px of the scan's long side."""
    def go(a: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(a, (0, 0), px * max(a.shape[:2]) / 1000)
    return go


def _sharpened(a: np.ndarray) -> np.ndarray:
    """A library's unsharp mask (amount 1, radius 1.5 px a 1,000 px): halos at every edge."""
    soft = cv2.GaussianBlur(a, (0, 0), 1.5 * max(a.shape[:2]) / 1000)
    return np.clip(a.astype(np.float32) * 2 - soft, 0, 255).astype(np.uint8)


def _gutter(side: str, depth: float, width: float) -> Change:
    """A curved page's gutter shadow: the scan darkened towards one side, ``depth`` at the
    edge, fading over ``width`` of the image (quadratically, as a page curves away)."""
    def go(a: np.ndarray) -> np.ndarray:
        w = a.shape[1]
        x = np.arange(w, dtype=np.float32) / w
        d = x if side == "left" else 1 - x
        f = 1 - depth * np.clip(1 - d / width, 0, 1) ** 2
        return np.clip(a.astype(np.float32) * f[None, :, None], 0, 255).astype(np.uint8)
    return go


def _on_bed(k: float) -> Change:
    """The page small on a dark copy-stand bed ``k`` times its size (a small book under a
    camera set for large ones), a third of the way down."""
    def go(a: np.ndarray) -> np.ndarray:
        h, w = a.shape[:2]
        out = np.clip(np.random.default_rng(0).normal(25, 4, (int(h * k), int(w * k), 3)),
                      0, 255).astype(np.uint8)
        y, x = (out.shape[0] - h) // 3, (out.shape[1] - w) // 2
        out[y:y + h, x:x + w] = a
        return out
    return go


def _bed_box(k: float) -> Callable[[Box, int, int], Box]:
    def go(b: Box, w: int, h: int) -> Box:
        big_w, big_h = int(w * k), int(h * k)
        x, y = (big_w - w) // 2, (big_h - h) // 3
        return ((x + b[0] * w) / big_w, (y + b[1] * h) / big_h, (x + b[2] * w) / big_w,
                (y + b[3] * h) / big_h)
    return go


def _skew_matrix(w: int, h: int, deg: float) -> np.ndarray:
    return cv2.getRotationMatrix2D((w / 2, h / 2), deg, 1.0)


def _skew(deg: float) -> Change:
    def go(a: np.ndarray) -> np.ndarray:
        h, w = a.shape[:2]
        return cv2.warpAffine(a, _skew_matrix(w, h, deg), (w, h), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    return go


def _skew_box(deg: float) -> Callable[[Box, int, int], Box]:
    """A box after the skew: the upright box around its four turned corners."""
    def go(b: Box, w: int, h: int) -> Box:
        m = _skew_matrix(w, h, deg)
        pts = np.array([[b[0] * w, b[1] * h, 1], [b[2] * w, b[1] * h, 1],
                        [b[0] * w, b[3] * h, 1], [b[2] * w, b[3] * h, 1]]) @ m.T
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        return (max(0.0, x0 / w), max(0.0, y0 / h), min(1.0, x1 / w), min(1.0, y1 / h))
    return go


def _turned(a: np.ndarray) -> np.ndarray:
    """A page printed across the book (a landscape plate, a table), as its scan shows it:
    its top at the left (turned a quarter anticlockwise), its lines running up."""
    return np.ascontiguousarray(np.rot90(a, k=1))


def _turned_box(b: Box, _w: int, _h: int) -> Box:
    return (b[1], 1.0 - b[2], b[3], 1.0 - b[0])


JP2 = "jp2"  # as a quality: the scan saved as JPEG 2000 at 1/JP2_RATE of its raw size
JP2_RATE = 20  # 1.2 bits a pixel
# name -> (pixel change, JPEG quality of the scan or JP2, box change or None)
CHANGES: dict[str, tuple[Change | None, int, Callable[[Box, int, int], Box] | None]] = {
    "as published": (None, 0, None),
    "re-encoded, JPEG 90": (lambda a: a, 90, None),  # a control, as the first: no change
    "darker (gamma 1.6)": (gamma(1.6), 90, None),
    "lighter (gamma 0.6)": (gamma(0.6), 90, None),
    "warm white balance": (tint(1.0, 0.92, 0.76), 90, None),
    "cool white balance": (tint(0.84, 0.94, 1.0), 90, None),
    "grey": (_grey, 90, None),
    "low contrast": (_contrast, 90, None),
    "light falloff": (_falloff, 90, None),
    "sensor noise": (noise(8), 90, None),
    "JPEG quality 35": (lambda a: a, 35, None),
    "JPEG 2000 (archive.org)": (lambda a: a, JP2, None),
    "half resolution": (_scale(0.5), 90, None),
    "double resolution": (_scale(2.0), 90, None),
    "skew 1.5 deg": (_skew(1.5), 90, _skew_box(1.5)),
    "skew -1.5 deg": (_skew(-1.5), 90, _skew_box(-1.5)),
    "turned a quarter": (_turned, 90, _turned_box),
}

CONTROLS = ("as published", "re-encoded, JPEG 90")
# The camera's focus, asked for with --focus (not among the shipped changes, whose means
# the README follows from run to run)
FOCUS: dict[str, tuple[Change | None, int, Callable[[Box, int, int], Box] | None]] = {
    "soft focus (1 px)": (_blur(1.0), 90, None),
    "soft focus (2 px)": (_blur(2.0), 90, None),
    "sharpened": (_sharpened, 90, None),
    # a soft camera with another difference: archive.org's storage, a smaller scan, a
    # flat exposure
    "soft (1 px), JPEG 2000": (_blur(1.0), JP2, None),
    "soft (1 px), half resolution": (lambda a: _blur(1.0)(_scale(0.5)(a)), 90, None),
    "soft (1 px), low contrast": (lambda a: _contrast(_blur(1.0)(a)), 90, None),
}
# The page curving into the gutter, asked for with --gutter: a shadow down one side
GUTTERS = {"gutter shadow left (40%, a tenth)": (_gutter("left", 0.4, 0.1), 90, None),
           "gutter shadow right (60%, 15%)": (_gutter("right", 0.6, 0.15), 90, None)}
# The page small in its frame, asked for with --frame: a dark bed 1.25-3 times its size
FRAMES = {f"on a bed {k:g}x its size": (_on_bed(k), 90, _bed_box(k))
          for k in (1.25, 1.5, 2.0, 2.5, 3.0)}


def way(name: str) -> tuple[Change | None, int, Callable[[Box, int, int], Box] | None]:
    """A change by its name: one of the shipped ones, or of those a flag adds (FOCUS,
    GUTTERS, FRAMES), or any skew as ``--skew`` names it ("skew 0.75 deg"), so a test
    asks for any of them by name alone."""
    for ways in (CHANGES, FOCUS, GUTTERS, FRAMES):
        if name in ways:
            return ways[name]
    skew = re.fullmatch(r"skew (-?[0-9.]+) deg", name)
    if skew:
        return _skewed(float(skew.group(1)))
    raise KeyError(name)


def _skewed(deg: float) -> tuple[Change, int, Callable[[Box, int, int], Box]]:
    """The change that skews a scan ``deg`` degrees, as the shipped skews are made."""
    return _skew(deg), 90, _skew_box(deg)


def rescan(data: bytes, name: str) -> bytes:
    """A scan's JPEG bytes made the ``name`` way (as published: the bytes themselves)."""
    change, quality, _box = way(name)
    if change is None:
        return data
    with Image.open(io.BytesIO(data)) as im:
        a = np.asarray(im.convert("RGB"))
    out = io.BytesIO()
    if quality == JP2:
        return jpx_bytes(Image.fromarray(change(a)), JP2_RATE)
    Image.fromarray(change(a)).save(out, "JPEG", quality=quality)
    return out.getvalue()


def scan_preview(data: bytes, side: int = F.PREVIEW_SIDE) -> Image.Image:
    """What the reader shows the finder for a scan's bytes, JPEG or JPEG 2000 (``side``:
    the least long side, larger for the reader's ``closer``)."""
    if data[:2] == b"\xff\xd8":
        return jpeg_preview(data, side)
    preview = reader._jpx_preview(data, side)
    if preview is None:
        raise ValueError("Pillow cannot decode this JPEG 2000 scan")
    return preview


def truth_as(page: Page, name: str) -> list[Box]:
    """The page's picture boxes on its scan made the ``name`` way (turned with a skew)."""
    box = way(name)[2]
    if not box:
        return page.truth
    with Image.open(DATA / page.name) as im:
        w, h = im.size
    return [box(b, w, h) for b in page.truth]


def changed(page: Page, name: str, cut: bool = False) -> tuple[list[Box], list[Box]]:
    """(truth, kept boxes) for one page made the ``name`` way; with ``cut``, the crops as
    the pipeline cuts them (``crop_edges``: lines of text read off their edges in the
    changed scan itself)."""
    data = rescan((DATA / page.name).read_bytes(), name)
    found = F.find(scan_preview(data), closer=lambda side: scan_preview(data, side))
    if cut:
        return truth_as(page, name), as_cut(found, io.BytesIO(data))
    return truth_as(page, name), [r.box for r in found.regions if r.kept]


def report(label: str, pages: list[Page], names: list[str], eye: list[Page] | None = None,
           cut: bool = False) -> None:
    """One row per change, then their mean and worst; with ``eye`` (the same pages with
    the woodcuts the labels leave unboxed, ``BY_EYE``) the mean scored against them too."""
    print(f"{label} ({len(pages)} pages), shipped PARAMS"
          + (", the crops as cut (crop_edges):" if cut else ":"))
    print(f"  {'scan':<22} {'found>=2%':>9} {'IoU':>6} {'precision':>14} {'text clean':>14}"
          "  pages that changed")
    base: list[list[Box]] = []
    changes: list[dict[str, float]] = []
    by_eye: list[dict[str, float]] = []
    for name in tqdm(names, desc=label.split(" ")[0], leave=False):
        res = [changed(p, name, cut) for p in pages]
        s = score(res)
        if name not in CONTROLS:
            changes.append(s)
            if eye:
                by_eye.append(score((truth_as(p, name), k) for p, (_t, k)
                                    in zip(eye, res, strict=True)))
        kept = [k for _t, k in res]
        if not base:
            base = kept
        moved = [p.name.rsplit("/", 1)[-1] for p, a, b in zip(pages, base, kept, strict=True)
                 if len(a) != len(b)]
        prec = f"{s['precision']:.3f} ({s['kept']})"
        text = f"{s['text_clean']:.3f} ({s['text_pages']})"
        print(f"  {name:<22} {s['recall2']:>9.3f} {s['median_iou']:>6.3f} {prec:>14} "
              f"{text:>14}  {len(moved)}" + (f": {', '.join(moved[:4])}" if moved else ""))
    if changes:
        summary(changes)
    if by_eye:
        print(f"  with the {len(BY_EYE)} woodcuts the labels leave unboxed (BY_EYE):")
        summary(by_eye)


def summary(changes: list[dict[str, float]]) -> None:
    """The mean and the worst of the changes' scores, one row each."""
    keys = ("recall2", "median_iou", "precision", "text_clean")
    for label, pick in (("mean of the changes", np.mean), ("worst of the changes", min)):
        v = {k: float(pick([c[k] for c in changes])) for k in keys}
        print(f"  {label:<22} {v['recall2']:>9.3f} {v['median_iou']:>6.3f} "
              f"{v['precision']:>14.3f} {v['text_clean']:>14.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", choices=("early", "moreno", "both"), default="both")
    ap.add_argument("--only", nargs="*", help="only these changes (names as printed)")
    ap.add_argument("--param", nargs="*", default=[], metavar="KEY=VALUE",
                    help="run with figures.PARAMS changed, to see what a constant does")
    ap.add_argument("--cut", action="store_true",
                    help="score the crops as the pipeline cuts them (lines of text at their "
                         "edges cut off in the scan itself), not the finder's boxes")
    ap.add_argument("--focus", action="store_true",
                    help="also the camera's focus: soft (a blur of 1 and 2 px a 1,000 px; "
                         "1 px with JPEG 2000, half resolution, low contrast) and a "
                         "library's sharpening")
    ap.add_argument("--gutter", action="store_true",
                    help="also a curved page's gutter shadow down one side (40%% darker at the "
                         "edge over a tenth of the image, 60%% over 15%%)")
    ap.add_argument("--frame", action="store_true",
                    help="also the page small in its frame: on a dark bed 1.25, 1.5, 2, 2.5 and 3 "
                         "times its size")
    ap.add_argument("--skew", nargs="*", type=float, default=[], metavar="DEG",
                    help="also these skews (the shipped changes skew 1.5 degrees either way)")
    args = ap.parse_args()
    for kv in args.param:
        key, value = kv.split("=")
        F.PARAMS[key] = float(value)
    for deg in args.skew:
        CHANGES[f"skew {deg:g} deg"] = _skewed(deg)
    if args.focus:
        CHANGES.update(FOCUS)
    if args.gutter:
        CHANGES.update(GUTTERS)
    if args.frame:
        CHANGES.update(FRAMES)
    names = [n for n in CHANGES if not args.only or n == "as published"
             or any(o in n for o in args.only)]
    cv2.setNumThreads(1)
    if args.source in ("early", "both"):
        pages = early_pages()
        report("Early printed books as libraries publish them", pages, names,
               with_by_eye(pages), args.cut)
    if args.source in ("moreno", "both"):
        pages = [p for p in moreno_pages() if (DATA / p.name).suffix.lower() in (".jpg", ".jpeg")]
        report("Moreno chapbooks", pages, names, cut=args.cut)


if __name__ == "__main__":
    main()
