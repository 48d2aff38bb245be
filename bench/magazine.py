"""A synthetic scanned fashion magazine, written as a real image-only PDF.

Pages are 300-dpi JPEG scans on yellowed paper: about 70% dense text columns,
30% engraving-like plates (hatched figures in a ruled frame). The PDF is
written by hand, object by object, so a multi-GB file is streamed to disk
and never held in memory. A small pool of distinct pages is drawn once and
each JPEG page gets unique bytes (a comment), so no two pages share an image's
bytes, as in a real scan. ``jpx_pool`` turns the pool into JPEG 2000 scans, as
archive.org's PDFs carry them.

    python bench/magazine.py OUT.pdf --pages 200 [--gb 2.0]
"""

from __future__ import annotations

import argparse
import io
import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

DPI = 300
PAGE_PT = (612, 792)  # US letter, like most digitised periodicals
PAGE_PX = (PAGE_PT[0] * DPI // 72, PAGE_PT[1] * DPI // 72)
WORDS = (
    "la moda de la temporada vestido de seda con encajes y volantes sombrero adornado "
    "con plumas de avestruz guantes de cabritilla corsé de ballena falda de terciopelo"
).split()


def _paper(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    w, h = size
    base = np.array([236, 224, 192], dtype=np.float32) + rng.normal(0, 3, 3)
    small = rng.normal(0, 6, (h // 16 + 1, w // 16 + 1, 1)).astype(np.float32)
    stain = np.asarray(
        Image.fromarray(np.clip(small[..., 0] + 128, 0, 255).astype(np.uint8)).resize((w, h))
    ).astype(np.float32)[..., None] - 128
    grain = rng.normal(0, 5, (h, w, 1)).astype(np.float32)
    arr = np.clip(base + stain + grain, 0, 255).astype(np.uint8)
    return Image.fromarray(arr, "RGB")


def text_page(rng: np.random.Generator, size: tuple[int, int] = PAGE_PX) -> Image.Image:
    """Two or three justified columns of body text under a heading."""
    img = _paper(rng, size)
    draw = ImageDraw.Draw(img)
    w, h = size
    ink = (38, 30, 24)
    font = ImageFont.load_default(size=int(rng.integers(30, 40)))
    head = ImageFont.load_default(size=72)
    margin = int(w * 0.08)
    draw.text((margin, margin), "LA MODA ELEGANTE", font=head, fill=ink)
    cols = int(rng.integers(2, 4))
    gap = 50
    col_w = (w - 2 * margin - gap * (cols - 1)) // cols
    line_h = int(font.size * 1.35)
    for c in range(cols):
        x0 = margin + c * (col_w + gap)
        y = margin + 160
        while y < h - margin:
            line, width = [], 0
            while True:
                word = WORDS[int(rng.integers(len(WORDS)))]
                ww = draw.textlength(word + " ", font=font)
                if width + ww > col_w:
                    break
                line.append(word)
                width += ww
            draw.text((x0, y), " ".join(line), font=font, fill=ink)
            y += line_h
            if rng.random() < 0.06:
                y += line_h  # paragraph break
    return img.filter(ImageFilter.GaussianBlur(0.6))


def engraving_page(rng: np.random.Generator, size: tuple[int, int] = PAGE_PX) -> Image.Image:
    """A framed plate: a figure built of hatching, with cross-hatched shadows."""
    img = _paper(rng, size)
    draw = ImageDraw.Draw(img)
    w, h = size
    ink = (30, 24, 20)
    m = int(w * 0.09)
    draw.rectangle((m, m, w - m, h - m), outline=ink, width=6)
    draw.rectangle((m + 18, m + 18, w - m - 18, h - m - 18), outline=ink, width=2)
    # background hatching with a gradient of spacing
    for y in range(m + 30, h - m - 30, 9):
        if rng.random() < 0.7:
            draw.line((m + 30, y, w - m - 30, y + rng.integers(-3, 4)), fill=ink, width=1)
    # figures: ellipses (dresses) filled with curved hatching and cross-hatching
    for _ in range(int(rng.integers(2, 4))):
        cx = int(rng.integers(w // 4, 3 * w // 4))
        cy = int(rng.integers(h // 3, 2 * h // 3))
        rx, ry = int(rng.integers(200, 380)), int(rng.integers(500, 900))
        for k in range(0, 2 * rx, 7):
            x = cx - rx + k
            half = ry * math.sqrt(max(0.0, 1 - ((x - cx) / rx) ** 2))
            draw.line((x, cy - half, x + 30, cy + half), fill=ink, width=2)
        for k in range(0, 2 * ry, 11):
            y = cy - ry + k
            half = rx * math.sqrt(max(0.0, 1 - ((y - cy) / ry) ** 2)) * 0.6
            draw.line((cx - half, y, cx + half, y + 20), fill=ink, width=1)
        draw.ellipse((cx - 70, cy - ry - 150, cx + 70, cy - ry - 10), outline=ink, width=4)
    return img.filter(ImageFilter.GaussianBlur(0.8))


def page_pool(n_text: int = 7, n_plates: int = 3, seed: int = 0) -> list[tuple[str, bytes]]:
    """Distinct pages as JPEG bytes, labelled 'text' or 'plate'."""
    rng = np.random.default_rng(seed)
    pool = []
    for kind, make, count in (("text", text_page, n_text), ("plate", engraving_page, n_plates)):
        for _ in range(count):
            buf = io.BytesIO()
            make(rng).save(buf, format="JPEG", quality=88, dpi=(DPI, DPI))
            pool.append((kind, buf.getvalue()))
    return pool


def jpx_pool(pool: list[tuple[str, bytes]], rate: float = 40.0) -> list[tuple[str, bytes]]:
    """The pool as lossy JPEG 2000 (JP2, 5 wavelet levels), ``rate`` times smaller than the
    raw pixels, as archive.org compresses its scans; encoded two at a time (OpenJPEG's
    encoder takes 4 s a page)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(2) as ex:
        return list(zip([k for k, _ in pool], ex.map(_to_jpx, [d for _, d in pool],
                                                     [rate] * len(pool)), strict=True))


def _to_jpx(data: bytes, rate: float) -> bytes:
    return jpx_bytes(Image.open(io.BytesIO(data)), rate)


def jpx_bytes(img: Image.Image, rate: float = 30.0, mode: str = "RGB",
              resolutions: int = 0) -> bytes:
    """``img`` as lossy JPEG 2000 (JP2) ``rate`` times smaller than its raw pixels, with
    ``resolutions`` - 1 wavelet levels (0: OpenJPEG's default, five)."""
    buf = io.BytesIO()
    img.convert(mode).save(buf, "JPEG2000", quality_mode="rates", quality_layers=[rate],
                           irreversible=True, num_resolutions=resolutions)
    return buf.getvalue()


def _pdf_text(text: str) -> bytes:
    """A PDF literal string in WinAnsi (Helvetica's standard encoding)."""
    raw = text.encode("cp1252", "replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def ocr_layer(kind: str, number: int, rng: np.random.Generator) -> bytes:
    """An invisible OCR text layer (render mode 3), as a library's OCR leaves one: body
    lines on a text page, a plate's legend under its frame."""
    w, h = PAGE_PT
    margin = w * 0.08
    if kind == "plate":
        frame = 0.09 * w  # engraving_page's frame, in points
        lines = [(h - frame + 12, 13, f"Lám. {number}. Toilette de visite, vestido de seda")]
    else:
        lines = [(margin + 40, 22, "LA MODA ELEGANTE")]
        y = margin + 80
        while y < h - margin:
            words = [WORDS[int(rng.integers(len(WORDS)))] for _ in range(9)]
            lines.append((y, 9, " ".join(words)))
            y += 12.5
    ops = [b"BT 3 Tr"]
    for top, size, text in lines:
        ops.append(b"/F1 %d Tf 1 0 0 1 %.1f %.1f Tm %s Tj" % (size, margin, h - top - size,
                                                             _pdf_text(text)))
    ops.append(b"ET")
    return b"\n".join(ops)


def page_order(pool: list[tuple[str, bytes]], pages: int, seed: int = 0) -> list[int]:
    """Which pool page each of ``pages`` is: about 30% plates, the same for a seed whatever
    the PDF's layout, so the plain, text-layer and MRC magazines hold the same pages."""
    texts = [i for i, p in enumerate(pool) if p[0] == "text"]
    plates = [i for i, p in enumerate(pool) if p[0] == "plate"]
    rng = np.random.default_rng(seed + 1)
    return [(plates if rng.random() < 0.3 else texts)[int(rng.integers(3))]
            for _ in range(pages)]


def write_magazine_pdf(
    out: str | Path, pages: int, pool: list[tuple[str, bytes]] | None = None, seed: int = 0,
    text_layer: bool = False,
) -> list[str]:
    """Stream an image-only PDF of ``pages`` scans to ``out``; returns each page's kind.

    ``text_layer`` adds an invisible OCR text layer to every page, as most library
    PDFs have one.
    """
    pool = pool or page_pool(seed=seed)
    order = page_order(pool, pages, seed)
    words_rng = np.random.default_rng(seed + 2)  # the page kinds stay those of the plain PDF
    kinds: list[str] = []
    offsets: list[int] = []
    with open(out, "wb") as fh:

        def obj(body: bytes) -> None:
            offsets.append(fh.tell())
            fh.write(f"{len(offsets)} 0 obj\n".encode() + body + b"\nendobj\n")

        fh.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
        obj(b"<< /Type /Catalog /Pages 2 0 R >>")
        kids = " ".join(f"{3 + 3 * i} 0 R" for i in range(pages))
        obj(f"<< /Type /Pages /Count {pages} /Kids [{kids}] >>".encode())
        w, h = PAGE_PT
        font = 3 + 3 * pages  # written after the pages, so the page numbering stays
        fonts = f"/Font << /F1 {font} 0 R >> " if text_layer else ""
        for i in range(pages):
            kind, data = pool[order[i]]
            kinds.append(kind)
            jpx = not data.startswith(b"\xff\xd8")
            if not jpx:  # a JPEG comment; a JP2 is left as it is
                data = data[:2] + b"\xff\xfe\x00\x0a" + i.to_bytes(8, "big") + data[2:]
            page_no = 3 + 3 * i
            obj(
                f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w} {h}] "
                f"/Resources << {fonts}/XObject << /Im0 {page_no + 2} 0 R >> >> "
                f"/Contents {page_no + 1} 0 R >>".encode()
            )
            content = f"q {w} 0 0 {h} 0 0 cm /Im0 Do Q".encode()
            if text_layer:
                content += b"\n" + ocr_layer(kind, i + 1, words_rng)
            obj(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
            iw, ih = Image.open(io.BytesIO(data)).size
            obj(
                f"<< /Type /XObject /Subtype /Image /Width {iw} /Height {ih} "
                f"/ColorSpace /DeviceRGB /BitsPerComponent 8 "
                f"/Filter /{'JPXDecode' if jpx else 'DCTDecode'} "
                f"/Length {len(data)} >>\nstream\n".encode() + data + b"\nendstream"
            )
        if text_layer:
            obj(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                b"/Encoding /WinAnsiEncoding >>")
        xref = fh.tell()
        fh.write(f"xref\n0 {len(offsets) + 1}\n0000000000 65535 f \n".encode())
        for off in offsets:
            fh.write(f"{off:010d} 00000 n \n".encode())
        fh.write(
            f"trailer\n<< /Size {len(offsets) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
            .encode()
        )
    return kinds


def write_mrc_pdf(out: str | Path, pages: int, pool: list[tuple[str, bytes]] | None = None,
                  seed: int = 0) -> list[str]:
    """The magazine as archive.org's own PDFs lay a scan out (MRC, ``bench.mrc``): each
    distinct page layered once, the pages drawn in the plain PDF's order; returns each
    page's kind."""
    import pymupdf

    from bench.mrc import add_mrc_page

    pool = pool or page_pool(seed=seed)
    layered = pymupdf.open()
    for _kind, data in pool:
        add_mrc_page(layered, np.asarray(Image.open(io.BytesIO(data)).convert("RGB")), dpi=DPI)
    doc, kinds = pymupdf.open(), []
    for i in page_order(pool, pages, seed):
        kinds.append(pool[i][0])
        doc.insert_pdf(layered, from_page=i, to_page=i)
    doc.save(out, garbage=3)
    return kinds


def pages_for_gb(gb: float, pool: list[tuple[str, bytes]]) -> int:
    mean = sum(len(d) for _, d in pool) / len(pool)
    return math.ceil(gb * 2**30 / mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--gb", type=float, default=None, help="size the PDF to this many GB")
    args = parser.parse_args()
    pool = page_pool()
    pages = pages_for_gb(args.gb, pool) if args.gb else args.pages
    kinds = write_magazine_pdf(args.out, pages, pool)
    size = Path(args.out).stat().st_size / 2**20
    print(f"{args.out}: {pages} pages ({kinds.count('plate')} plates), {size:.0f} MB")


if __name__ == "__main__":
    main()
