"""Contact sheets of figure detections, so a person can see what the numbers mean.

Green: annotated picture that was found (IoU >= 0.5); magenta: annotated picture missed;
blue: kept crop that matches; red: kept crop with no picture under it (false positive);
orange: candidate not kept (ornament, too small, text block...), with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

Box = tuple[float, float, float, float]
GREEN, MAGENTA, BLUE = (0, 170, 0), (230, 0, 230), (0, 90, 255)
RED, ORANGE = (255, 0, 0), (255, 150, 0)


def draw_page(img: Image.Image, truth: Sequence[Box], regions: Sequence, matched_truth: set[int],
              matched_pred: set[int], width: int = 260, label: str = "") -> Image.Image:
    """One annotated thumbnail; ``matched_pred`` indexes the kept regions in order."""
    s = width / img.width
    t = img.convert("RGB").resize((width, max(1, round(img.height * s))), Image.Resampling.BOX)
    d = ImageDraw.Draw(t)

    def px(b: Box) -> list[float]:
        return [b[0] * t.width, b[1] * t.height, b[2] * t.width, b[3] * t.height]

    for i, b in enumerate(truth):
        d.rectangle(px(b), outline=GREEN if i in matched_truth else MAGENTA, width=3)
    k = 0
    for r in regions:
        if r.kept:
            d.rectangle(px(r.box), outline=BLUE if k in matched_pred else RED, width=2)
            k += 1
        else:
            b = px(r.box)
            d.rectangle(b, outline=ORANGE, width=1)
            d.text((b[0] + 1, b[1] + 1), r.reason[:12], fill=ORANGE)
    out = Image.new("RGB", (t.width, t.height + 14), "white")
    out.paste(t, (0, 14))
    ImageDraw.Draw(out).text((2, 1), label[:40], fill="black")
    return out


def save_sheet(tiles: Sequence[Image.Image], path: Path, cols: int = 6) -> Path:
    if not tiles:
        return path
    w = max(t.width for t in tiles)
    h = max(t.height for t in tiles)
    rows = (len(tiles) + cols - 1) // cols
    sheet = Image.new("RGB", (cols * w, rows * h), "white")
    for i, t in enumerate(tiles):
        sheet.paste(t, ((i % cols) * w, (i // cols) * h))
    sheet.save(path)
    return path
