"""Tesseract for scans with no text layer, read only where a caption can be.

A page-level OCR pass costs seconds a page and, on the chapbooks, found the woodcut's
title for only about half of them: the hatching of a woodcut reads as a field of
garbage words and spoils the page's layout analysis. So only pages with a kept picture
are read, and of those only the bands just above and just below the pictures, across
the whole page width (a title runs wider than the picture over it). Bands of
pictures side by side merge, so a row of three woodcuts is read once. Each worker
process keeps one Tesseract engine per language for the job.

Tesseract is optional: ``problem(lang)`` says in one line what is missing, and the
build goes on with empty ``printed_text``.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageDraw

from archive.printed_text import Box, Word

os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one thread an engine: the workers share cores

BAND = 0.10  # of the page height, above and below each kept picture
INSIDE = 0.01  # of the page height, into the picture: a caption may touch it
MIN_CONFIDENCE = 40.0  # Tesseract's word confidence (0-100); under it, mostly noise
PSM = "SINGLE_BLOCK"  # a band is a few lines; the pictures in it are painted over
LANG = re.compile(r"^[A-Za-z_]+(\+[A-Za-z_]+)*$")
_DIRS = ("/usr/share/tesseract-ocr/*/tessdata", "/usr/share/tessdata",
         "/usr/local/share/tessdata", "/opt/homebrew/share/tessdata")
_engines: dict[str, object] = {}


def tessdata_dir(lang: str) -> str | None:
    """The folder that holds every ``LANG.traineddata`` of ``lang`` ("spa+eng")."""
    wanted = lang.split("+")
    roots = [os.environ["TESSDATA_PREFIX"]] if os.environ.get("TESSDATA_PREFIX") else []
    for pattern in _DIRS:
        roots += sorted(glob.glob(pattern), reverse=True)
    for root in roots:
        if all(os.path.isfile(os.path.join(root, f"{code}.traineddata")) for code in wanted):
            return root
    return None


def installed_languages() -> list[str]:
    """What ``tesseract --list-langs`` knows, for the message when a language is missing."""
    exe = shutil.which("tesseract")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "--list-langs"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    return [ln.strip() for ln in out.stdout.splitlines()[1:] if ln.strip()]


def problem(lang: str) -> str | None:
    """None when ``--ocr lang`` can run here; else one line saying what is missing."""
    if not LANG.match(lang or ""):
        return f"--ocr {lang!r} is not a Tesseract language code (e.g. spa, eng, spa+eng)"
    try:
        engine(lang)
    except ImportError:
        return ("--ocr: Tesseract is not installed (pip install tesserocr, and apt-get install "
                "tesseract-ocr tesseract-ocr-spa); the items get no printed_text from OCR")
    except RuntimeError:
        known = ", ".join(installed_languages()) or "none found"
        return (f"--ocr: Tesseract has no {lang!r} language data (installed: {known}; apt-get "
                f"install tesseract-ocr-{lang.split('+')[0]}, or set TESSDATA_PREFIX); "
                "the items get no printed_text from OCR")
    return None


def engine(lang: str):
    """This process's Tesseract engine for ``lang``; raises ImportError or RuntimeError."""
    if lang not in _engines:
        import tesserocr

        path = tessdata_dir(lang)
        if path is None:
            raise RuntimeError(f"no tessdata for {lang}")
        _engines[lang] = tesserocr.PyTessBaseAPI(path=path, lang=lang,
                                                 psm=getattr(tesserocr.PSM, PSM))
    return _engines[lang]


def bands(boxes: Sequence[Box]) -> list[tuple[float, float]]:
    """The strips (y0, y1, page fractions) above and below the boxes, merged where they meet."""
    strips = []
    for _x0, y0, _x1, y1 in boxes:
        strips.append((max(0.0, y0 - BAND), min(1.0, y0 + INSIDE)))
        strips.append((max(0.0, y1 - INSIDE), min(1.0, y1 + BAND)))
    merged: list[tuple[float, float]] = []
    for lo, hi in sorted(strips):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        elif hi > lo:
            merged.append((lo, hi))
    return merged


def masked_band(image: Image.Image, top: int, bottom: int, boxes: Sequence[Box]) -> Image.Image:
    """The band with every picture in it painted over in the band's paper colour.

    A neighbour taller than the picture the band belongs to, or the picture's own
    edge, would otherwise be read as a row of garbage words.
    """
    band = image.crop((0, top, image.width, bottom)).convert("L")
    paper = int(np.percentile(np.asarray(band), 75))
    draw = ImageDraw.Draw(band)
    for x0, y0, x1, y1 in boxes:
        y0p, y1p = y0 * image.height - top, y1 * image.height - top
        if y1p > 0 and y0p < band.height:
            draw.rectangle((x0 * image.width, max(0, y0p), x1 * image.width,
                            min(band.height, y1p)), fill=paper)
    return band


def band_words(image: Image.Image, boxes: Sequence[Box], lang: str) -> list[Word]:
    """Words Tesseract reads in the bands around ``boxes``, in fractions of ``image``."""
    import tesserocr

    api = engine(lang)
    width, height = image.size
    words: list[Word] = []
    for lo, hi in bands(boxes):
        top, bottom = round(lo * height), round(hi * height)
        if bottom - top < 8:
            continue
        api.SetImage(masked_band(image, top, bottom, boxes))
        api.Recognize()
        level, found = tesserocr.RIL.WORD, api.GetIterator()
        if found is None:
            continue
        for r in tesserocr.iterate_level(found, level):
            try:
                text = (r.GetUTF8Text(level) or "").strip()
                box = r.BoundingBox(level)
                confident = r.Confidence(level) >= MIN_CONFIDENCE
            except RuntimeError:  # an empty element ("No text returned")
                continue
            if not text or box is None or not confident:
                continue
            x0, y0, x1, y1 = box
            words.append(Word(x0 / width, (y0 + top) / height, x1 / width,
                              (y1 + top) / height, text))
    api.Clear()
    return words
