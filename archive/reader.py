"""Stream a PDF one page at a time, as cheaply as each page allows.

A scanned magazine is mostly pages that are one full-page JPEG. For those we
read the JPEG's own bytes and decode them at reduced scale (PIL ``draft``)
for the filter, and at full scale only if the page is kept. A page that is one
JPEG 2000 scan (archive.org's PDFs) is decoded the same way, at a coarser wavelet
level. Any other page is rendered with ``get_pixmap``. PDFs are opened by path,
never as a stream, so a 10 GB file is never read into memory, and MuPDF's store is
shrunk after every page so its cache does not grow with the file.
"""

from __future__ import annotations

import ctypes
import io
import math
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# PyMuPDF 2 imports its ONNX layout analyser and pymupdf4llm eagerly (about 1 s
# and 100 MB per process, paid again by every worker); page rasterising uses neither.
sys.modules.setdefault("pymupdf.layout", None)  # type: ignore[arg-type]
sys.modules.setdefault("pymupdf4llm", None)  # type: ignore[arg-type]
import numpy as np  # noqa: E402
import pymupdf  # noqa: E402
from PIL import Image  # noqa: E402

try:  # libjpeg-turbo's TurboJPEG API: the same 1/8 DCT preview, a fifth faster than PIL's
    import simplejpeg
except ImportError:  # pragma: no cover - optional; PIL's draft gives identical pixels
    simplejpeg = None

from archive import content_stream  # noqa: E402
from archive.errors import ArchiveError, BadPage  # noqa: E402

# A page may not decode to more pixels than this (a decompression bomb guard);
# self-hosters with bigger plates raise it with BORDE_MAX_PIXELS.
MAX_PIXELS = int(os.environ.get("BORDE_MAX_PIXELS", 150_000_000))
_OVER_LIMIT = f"exceeds the {MAX_PIXELS:,} px limit (raise it with BORDE_MAX_PIXELS)"
# The reduced image the filter sees: its longer side is at least this.
PREVIEW_SIDE = 360
# A single image must cover this much of the page to count as "the scan".
FULL_PAGE_COVER = 0.85
# An image of the page's own shape (its sides' ratio within this) is taken for its scan.
SAME_SHAPE = 0.02

# Pages between heap trims. A trim gives back the ~14 MB the next plate's decode faults in
# again. On the bench, one worker: every 16 pages 109,000 page faults, every 32 74,000,
# every 64 42,000; the peak RSS of two workers' tree 231-234, 235-239 and 238-245 MB
# (the budget is 250). The creep a trim stops is ~60 KB a page.
TRIM_EVERY = 32
try:
    _LIBC = ctypes.CDLL("libc.so.6") if sys.platform.startswith("linux") else None
except OSError:  # pragma: no cover - a Linux without glibc (musl): nothing to trim
    _LIBC = None
# glibc's mallopt parameters, and the sizes below which a buffer comes from the heap and a
# freed heap top is kept (the trim every TRIM_EVERY pages still gives it back).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
HEAP_BELOW = 32 << 20
KEEP_TOP = 16 << 20  # a page churns about 15 MB; 8 MB cost 60% more system time again


def heap_for_page_buffers() -> None:
    """Serve a page's buffers (the 2 MB stream, decodes, crops) from the heap.

    Called by a process that does nothing but build (the CLI, a pool worker), never by
    the app's server, whose other tabs keep glibc's own policy.

    By default glibc maps each buffer over 128 KB afresh and unmaps it when freed, and
    trims the heap top as soon as it is free: the next page's buffers fault in again,
    zeroed by the kernel (345,000 page faults and 1.7 s of system time on the 300-page
    bench). Memory still goes back to the OS every TRIM_EVERY pages (``release_heap``).
    """
    if _LIBC is not None and hasattr(_LIBC, "mallopt"):
        _LIBC.mallopt(_M_MMAP_THRESHOLD, HEAP_BELOW)
        _LIBC.mallopt(_M_TRIM_THRESHOLD, KEEP_TOP)


pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)


@dataclass
class Page:
    """One page, with its cheap preview decoded and its full image on demand."""

    doc: pymupdf.Document
    index: int  # 0-based
    preview: Image.Image
    width: int  # full-scale pixel size
    height: int
    jpeg: bytes | None  # the embedded scan, when the fast path applies
    rotation: int
    scale: float
    image_only: bool = False  # the content stream draws the scan and nothing else: no text
    jpx: bytes | None = None  # the embedded JPEG 2000 scan, when its fast path applies
    origin: dict = field(default_factory=dict)  # a PDF says nothing of where it came from

    @property
    def number(self) -> int:
        return self.index + 1

    def image_of(self, box: tuple[float, ...]) -> str:
        """The URL a crop's pixels came from: none, for a PDF (``IIIFPage.image_of``)."""
        return ""

    def full(self, need: tuple[int, int] | None = None) -> Image.Image:
        """The page at full scale; decoded only for kept pages.

        With ``need`` (width, height, as displayed), a JPEG scan is decoded at the
        smallest DCT scale (in eighths) that still covers it, and a rendered page at
        the smallest zoom: the output is resized down to that size anyway, and a
        300-dpi letter page padded to 1024 px decodes at 3/8, a fifth of the pixels.
        """
        if self.jpx is not None:
            img = _open_image(self.jpx)
            return _rotate(_decode_jpx(self.jpx, img, self._stored(need, img)), self.rotation)
        if self.jpeg is not None:
            img = _open_image(self.jpeg)
            if need:
                img = _decode_scaled(self.jpeg, img, self._stored(need, img))
            img.load()
            return _rotate(img, self.rotation)
        page = self.doc[self.index]
        zoom = self.scale
        if need:  # rendering past the output size only to shrink it again is waste
            r = page.rect
            zoom = min(zoom, max(need[0] / max(1e-6, r.width), need[1] / max(1e-6, r.height)))
        return _render(page, zoom)

    def full_array(self, need: tuple[int, int] | None = None,
                   boxes: list[tuple[float, ...]] | None = None) -> np.ndarray:
        """``full(need)`` as an RGB array: a JPEG scan straight from TurboJPEG, without the
        copies into and out of a PIL image (about 6 ms of a 4/8-scale letter page).
        ``boxes``, where the crops will be cut, matter only to a IIIF page."""
        if self.jpeg is not None and simplejpeg is not None:
            img = _open_image(self.jpeg)
            if img.mode in ("RGB", "L"):
                arr = _turbo(self.jpeg, self._stored(need, img))
                if arr is not None:
                    turns = (self.rotation % 360) // 90
                    return np.ascontiguousarray(np.rot90(arr, -turns)) if turns else arr
        return np.asarray(self.full(need).convert("RGB"))

    def _stored(self, need: tuple[int, int] | None, scan: Image.Image) -> tuple[int, int]:
        """``need`` (as displayed) turned to the stored scan's orientation and never above
        its size; the whole scan without a need."""
        if not need:
            return scan.width, scan.height
        tw, th = need[::-1] if self.rotation in (90, 270) else need
        return min(tw, scan.width), min(th, scan.height)


def open_pdf(path: str | Path, password: str | None = None) -> pymupdf.Document:
    """Open by path (never as a stream), with a one-line reason on failure."""
    p = Path(path)
    if not p.is_file():
        raise ArchiveError(f"{p}: no such file", code="no_file", name=p.name)
    with open(p, "rb") as fh:
        head = fh.read(1024)
    if not head:
        raise ArchiveError(f"{p.name}: the file is empty", code="empty", name=p.name)
    if b"%PDF" not in head:
        raise ArchiveError(f"{p.name}: not a PDF (no %PDF header)", code="not_pdf", name=p.name)
    try:
        doc = pymupdf.open(str(p), filetype="pdf")
    except Exception as exc:  # MuPDF raises several types for broken files
        raise ArchiveError(f"{p.name}: corrupt or unreadable PDF ({_short(exc)})", code="corrupt",
                           name=p.name) from None
    if doc.needs_pass:
        if not password:
            doc.close()
            raise ArchiveError(f"{p.name}: the PDF is encrypted; give its password (--password)",
                               code="encrypted", name=p.name)
        if not doc.authenticate(password):
            doc.close()
            raise ArchiveError(f"{p.name}: wrong password for the encrypted PDF",
                               code="wrong_password", name=p.name)
    try:
        count = doc.page_count
    except Exception as exc:
        raise ArchiveError(f"{p.name}: corrupt page tree ({_short(exc)})", code="corrupt",
                           name=p.name) from None
    if count == 0:
        doc.close()
        raise ArchiveError(f"{p.name}: the PDF has no pages", code="no_pages", name=p.name)
    return doc


def open_document(address: str | Path, password: str | None = None):
    """A PDF by path, or a IIIF manifest by URL or ``.json`` file (``archive.iiif``):
    what ``read_page`` reads pages from."""
    from archive.iiif import book  # the IIIF reader imports this module's helpers

    if book.is_iiif(address):
        return book.IIIFBook(str(address))
    return open_pdf(address, password)


def read_page(doc, index: int, scale: float = 2.0, preview_side: int = PREVIEW_SIDE) -> Page:
    """Load one page's preview; raises ``BadPage`` for a page that cannot be used.

    ``preview_side`` is the least long side of the preview: the page filter and the
    figure finder each say how much they need, and every page pays for it. ``doc`` is
    what ``open_document`` opened: a PDF, or a IIIF book that fetches its own pages.
    """
    if not isinstance(doc, pymupdf.Document):
        return doc.read_page(index, preview_side)
    try:
        page = doc[index]
        scan = _single_scan(doc, page)
        jpx = scan is not None and scan[0][:2] != b"\xff\xd8"
        preview = _jpx_preview(scan[0], preview_side) if jpx else None
        if scan is not None and (preview is not None or not jpx):
            data, w, h, alone = scan
            rot = page.rotation
            preview = _rotate(preview or _preview(data, preview_side), rot)
            if rot in (90, 270):
                w, h = h, w
            return Page(doc, index, preview, w, h, None if jpx else data, rot, scale, alone,
                        jpx=data if jpx else None)
        rect = page.rect
        if rect.width <= 0 or rect.height <= 0:
            raise BadPage("page has an empty MediaBox")
        side, size = preview_side, _scan_size(page)
        if size is not None:  # a scan MuPDF must render: previewed as its JPEG would be
            side = max(side, max(_dct_size(*size, preview_side)))
        scale = _safe_scale(rect.width, rect.height, scale)
        zoom = max(side / max(rect.width, rect.height), 0.05)
        preview = _render(page, min(zoom, scale))
        w, h = round(rect.width * scale), round(rect.height * scale)
        return Page(doc, index, preview, w, h, None, 0, scale)
    except BadPage:
        raise
    except Exception as exc:
        raise BadPage(f"unreadable page ({_short(exc)})") from None
    finally:
        pymupdf.TOOLS.store_shrink(100)
        if index % TRIM_EVERY == 0:
            release_heap()


def release_heap() -> None:
    """Give freed memory back to the OS (glibc's malloc_trim).

    Each page allocates and frees arrays of different sizes (decodes, the figure
    finder's masks); glibc keeps the freed pieces, and RSS crept up by 60 KB a page
    (+100 MB over a 1,015-page scan) until this ran every few pages.
    """
    if _LIBC is not None:
        _LIBC.malloc_trim(0)


def _single_scan(doc: pymupdf.Document, page: pymupdf.Page
                 ) -> tuple[bytes, int, int, bool] | None:
    """The page's JPEG (or JPEG 2000) bytes when the page is exactly one full-page, upright,
    unmasked scan, its size, and whether the content stream draws the scan alone (no text
    layer)."""
    images = page.get_images(full=True)
    if len(images) != 1:
        return None
    xref, smask, w, h, _bpc, cs, _alt, name, filt = images[0][:9]
    if smask or filt not in _SIGNATURES:
        return None
    if filt == "JPXDecode" and (cs not in _JPX_COLOURS or any(
            doc.xref_get_key(xref, key)[1] not in ("null", "0")
            for key in ("SMaskInData", "Decode"))):
        return None  # the PDF recolours or masks the scan's own pixels: MuPDF does that
    if w * h > MAX_PIXELS:
        raise BadPage(f"embedded image {w}x{h} px {_OVER_LIMIT}")
    contents = page.read_contents()
    box = _placement(contents, name)
    # drawn alone, and no annotation whose appearance could carry text
    alone = box is not None and doc.xref_get_key(page.xref, "Annots")[0] == "null"
    if box is None and content_stream.has_more_than_image(contents):
        box = _under_invisible_text(doc, page, contents, name)
    if box is None:
        return None
    crop = page.cropbox  # unrotated page space; y-flip does not change areas
    x0, y0, x1, y1 = box
    page_h = page.mediabox.height
    placed = pymupdf.Rect(x0, page_h - y1, x1, page_h - y0)
    area = crop.width * crop.height
    if not area or (placed & crop).get_area() / area < FULL_PAGE_COVER:
        return None
    data = _stored_stream(doc, xref) or doc.xref_stream_raw(xref)
    if not data or not data.startswith(_SIGNATURES[filt]):
        return None
    return data, w, h, alone


# The filters of the scans decoded from their own bytes, and how those bytes begin (a JPEG
# 2000 scan is a JP2 file or a bare codestream).
_SIGNATURES = {"DCTDecode": (b"\xff\xd8",),
               "JPXDecode": (b"\x00\x00\x00\x0cjP  \r\n\x87\n", b"\xff\x4f\xff\x51")}
# A JPEG 2000 scan's own colours are used where the PDF names none or a plain RGB or grey.
_JPX_COLOURS = ("", "DeviceRGB", "DeviceGray", "ICCBased", "CalRGB", "CalGray")


def _stored_stream(doc: pymupdf.Document, xref: int) -> bytes | None:
    """The stream's bytes read straight from the file (one ``pread``), or None to ask MuPDF.

    MuPDF copies a 2 MB scan through its file stream and then into Python (2.3 ms a
    page); the stored bytes of an unencrypted (no /Encrypt in the trailer: ``is_encrypted``
    is False once a blank password opened it), unmodified PDF opened by path are the raw
    stream itself. They are used only where the stream ends where its /Length says.
    """
    if doc.is_dirty or getattr(doc, "stream", None) is not None or not doc.name:
        return None
    try:
        if doc.xref_get_key(-1, "Encrypt")[0] != "null":  # is_encrypted is False once opened
            return None
        length = _stream_length(doc, xref)  # loads the object, which sets its stm_ofs
        offset = int(pymupdf.mupdf.ll_pdf_get_xref_entry_no_null(
            pymupdf._as_pdf_document(doc).m_internal, xref).stm_ofs)
        if offset <= 0 or length is None or length <= 0:
            return None
        fd = os.open(doc.name, os.O_RDONLY)
        try:
            data = os.pread(fd, length, offset)
            after = os.pread(fd, 32, offset + length).lstrip(b"\r\n\t\f\0 ")
        finally:
            os.close(fd)
    except Exception:  # private MuPDF API changed, file gone: MuPDF's own copy instead
        return None
    return data if len(data) == length and after.startswith(_STREAM_END) else None


_STREAM_END = b"endstream"


def _stream_length(doc: pymupdf.Document, xref: int) -> int | None:
    """The stream's /Length, direct or an indirect object."""
    kind, value = doc.xref_get_key(xref, "Length")
    if kind == "xref":
        value = doc.xref_object(int(value.split()[0]), compressed=True)
    try:
        return int(value.strip())
    except ValueError:
        return None


def _under_invisible_text(doc: pymupdf.Document, page: pymupdf.Page, contents: bytes,
                          name: str) -> tuple[float, float, float, float] | None:
    """The scan's placement on a page that adds only an invisible OCR text layer."""
    if any(font[2] == "Type3" for font in page.get_fonts(full=True)):
        return None  # a Type 3 glyph is a drawing, whatever the render mode
    forms = {xobject[1]: xobject[0] for xobject in page.get_xobjects()}

    def form(xobject: str) -> bytes | None:
        xref = forms.get(xobject)
        return doc.xref_stream(xref) if xref else None

    box = content_stream.placement(contents, name, form)
    return box if isinstance(box, tuple) else None


_NUM = rb"[-+]?(?:\d+\.?\d*|\.\d+)"
_CM = re.compile(rb"\s*(" + rb"\s+".join([_NUM] * 6) + rb")\s+cm")


def _placement(contents: bytes, name: str) -> tuple[float, float, float, float] | None:
    """Where a content stream of the form ``q [a b c d e f cm]... /Name Do Q`` puts the image.

    Reading the few bytes of a scanner's content stream is much cheaper than asking
    MuPDF for image rectangles, which decodes the image. Anything more complex (text,
    paths, clipping, several images) returns None and the page is rendered instead.
    """
    text = contents.strip()
    if len(text) > 512 or not text.startswith(b"q") or not text.endswith(b"Q"):
        return None
    body = text[1:-1]
    a, b, c, d, e, f = 1.0, 0.0, 0.0, 1.0, 0.0, 0.0
    pos = 0
    while True:
        m = _CM.match(body, pos)
        if not m:
            break
        na, nb, nc, nd, ne, nf = (float(v) for v in m.group(1).split())
        # new CTM = M x CTM (PDF row-vector convention)
        a, b, c, d, e, f = (
            na * a + nb * c, na * b + nb * d, nc * a + nd * c, nc * b + nd * d,
            ne * a + nf * c + e, ne * b + nf * d + f,
        )
        pos = m.end()
    rest = body[pos:].split()
    if rest != [b"/" + name.encode(), b"Do"] or b or c or a <= 0 or d <= 0:
        return None
    return e, f, e + a, f + d


def _preview(data: bytes, side: int = PREVIEW_SIDE) -> Image.Image:
    """The scan decoded at the smallest DCT scale that keeps a long side of ``side``.

    Every page pays this decode, so it is the reader's hot spot: the entropy decode
    of the whole JPEG cannot be skipped, but TurboJPEG skips PIL's per-call overhead.
    """
    img = _open_image(data)  # header only: the bomb check uses the JPEG's own size
    return _decode_scaled(data, img, draft_size(img.width, img.height, side))


def _decode_scaled(data: bytes, img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """``data`` as RGB at the smallest DCT scale whose both sides still reach ``size``.

    ``img`` is the same JPEG opened header-only by ``_open_image``. TurboJPEG scales
    in eighths; PIL's ``draft`` (the fallback, and the path for CMYK) only in halves.
    """
    if simplejpeg is not None and img.mode in ("RGB", "L"):
        arr = _turbo(data, size)
        if arr is not None:
            return Image.fromarray(arr, "RGB")
    img.draft("RGB", size)
    return img.convert("RGB")


def _turbo(data: bytes, size: tuple[int, int]) -> np.ndarray | None:
    """TurboJPEG's RGB decode at the smallest DCT scale whose both sides reach ``size``;
    None where it cannot, so PIL decodes it and names the fault if it cannot either."""
    try:
        return simplejpeg.decode_jpeg(data, colorspace="RGB", min_width=size[0],
                                      min_height=size[1])
    except ValueError:
        return None


def _jpx_preview(data: bytes, side: int = PREVIEW_SIDE) -> Image.Image | None:
    """A JPEG 2000 scan at the coarsest wavelet level whose longer side is still ``side``,
    brought to the size a JPEG of it would preview at (``_dct_size``); None where Pillow
    cannot decode it (no OpenJPEG, a 16-bit or CMYK scan), so MuPDF renders the page.

    MuPDF decodes every level of the scan at any zoom: 450 ms a 2550x3300 page against
    35 ms for the eighth of it that the figure finder looks at.
    """
    try:
        img = _open_image(data)
        if img.mode not in ("L", "RGB"):
            return None
        preview = _decode_jpx(data, img, draft_size(img.width, img.height, side))
        size = _dct_size(img.width, img.height, side)
        if preview.size == size:
            return preview
        return preview.resize(size, Image.Resampling.LANCZOS)
    except BadPage:
        raise
    except Exception:  # Pillow without OpenJPEG, a codestream it refuses: MuPDF's turn
        return None


def _scan_size(page: pymupdf.Page) -> tuple[int, int] | None:
    """The pixel size of the scan a page MuPDF must render is, if it is one: where the page
    holds a continuous-tone image of its own shape, its biggest image of that shape, masks
    included; else None. ``read_page`` previews such a page at the size its JPEG would
    preview at (``_dct_size``).

    archive.org's PDFs are MRC: the ink as a 1-bit mask at full resolution (a soft mask,
    or an older PDF's stencil) over a colour background at a third of it. Rendered at
    360 px such a page showed the finder a smaller page than the same scan as a JPEG
    does (412-550 px at 300-400 dpi): on chapbook pages laid out so, 3 of their 26
    woodcuts were lost, and none at the JPEG's size (``bench.mrc``). A 1-bit scan alone
    (CCITT, JBIG2) is left as it was: the finder's rules for binarized pages were measured
    at 360 px, and binarized composites rendered at their JPEG's size lost 2 of 47
    pictures. The shape stands in for where an image is drawn: asking MuPDF
    (``get_image_info``) decodes every JPEG 2000 layer.
    """
    rect = page.rect
    if rect.width <= 0 or rect.height <= 0:
        return None
    shape = min(rect.width, rect.height) / max(rect.width, rect.height)
    try:
        images = [(_with_mask(page.parent, smask, w, h), bpc)
                  for _x, smask, w, h, bpc, *_ in page.get_images(full=True)]
    except Exception:  # a broken resource dictionary: the render will say
        return None
    shaped = [(size, bpc) for size, bpc in images if min(size) > 0
              and abs(min(size) / max(size) - shape) <= SAME_SHAPE]
    if not any(bpc > 1 for _size, bpc in shaped):
        return None
    return max((size for size, _bpc in shaped), key=lambda s: s[0] * s[1])


def _with_mask(doc: pymupdf.Document, smask: int, w: int, h: int) -> tuple[int, int]:
    """An image's size, or its soft mask's where that is bigger (an MRC foreground's
    mask holds the ink at full resolution)."""
    if smask:
        mw, mh = (doc.xref_get_key(smask, key) for key in ("Width", "Height"))
        if mw[0] == mh[0] == "int" and int(mw[1]) * int(mh[1]) > w * h:
            return int(mw[1]), int(mh[1])
    return w, h


def _dct_size(w: int, h: int, side: int) -> tuple[int, int]:
    """The preview's size had the scan been a JPEG: the smallest scale in eighths whose
    longer side is still ``side``. A JPEG 2000 level halves, so a 1000 px page gives 500
    px where a JPEG gives 375; the finder's rules count text heights of 3-6 px, and on
    the early books decoded at 500 px the crops that were pictures fell from 0.98 to 0.80.
    """
    k = next((k for k in range(1, 8) if math.ceil(max(w, h) * k / 8) >= side), 8)
    return math.ceil(w * k / 8), math.ceil(h * k / 8)


def _decode_jpx(data: bytes, img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """``data`` as RGB at the coarsest level (each one halves the sides) whose both sides
    still reach ``size``; ``img`` is the same scan opened header-only by ``_open_image``."""
    level = 0
    while (level < JPX_LEVELS and math.ceil(img.width / 2 ** (level + 1)) >= size[0]
           and math.ceil(img.height / 2 ** (level + 1)) >= size[1]):
        level += 1
    while True:
        try:
            scan = _open_image(data)
            scan.reduce = level  # OpenJPEG's own reduced decode (Pillow's Jpeg2K plugin)
            scan.load()
            return scan.convert("RGB")
        except OSError:
            if level == 0:
                raise
            level -= 1  # a scan coded with fewer levels than asked for


JPX_LEVELS = 5  # OpenJPEG's default number of wavelet levels (and archive.org's)


def draft_size(w: int, h: int, side: int = PREVIEW_SIDE) -> tuple[int, int]:
    """The smallest JPEG scale whose longer side is still >= ``side``."""
    f = min(1.0, side / max(w, h))
    return max(1, int(w * f)), max(1, int(h * f))


def _safe_scale(w_pt: float, h_pt: float, scale: float) -> float:
    """Shrink the render scale of a page with absurd dimensions instead of exploding."""
    pixels = w_pt * h_pt * scale * scale
    if pixels <= MAX_PIXELS:
        return scale
    return (MAX_PIXELS / (w_pt * h_pt)) ** 0.5


def _render(page: pymupdf.Page, zoom: float) -> Image.Image:
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False)
    img = Image.frombytes("RGB", (pix.width, pix.height), pix.samples)
    del pix
    return img


def _open_image(data: bytes) -> Image.Image:
    """Open (header only) and refuse a bomb before a single pixel is decoded.

    No global state is touched (PIL's limit, the warnings filter): worker threads
    of a server never see each other's settings.
    """
    try:
        img = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise BadPage(f"image too large ({_short(exc)})") from None
    if img.width * img.height > MAX_PIXELS:
        raise BadPage(f"image {img.width}x{img.height} px {_OVER_LIMIT}")
    return img


def closer(page: Page) -> Callable[[int], Image.Image | None] | None:
    """The page's own scan decoded again with a long side of at least n px, turned as its
    preview is: for a page small in its scan (``figures.CLOSER``). None for a page MuPDF
    renders (its preview is already sized by its scan). A IIIF page asks its server."""
    if hasattr(page, "closer_at"):
        return page.closer_at
    if page.jpeg is not None:
        data = page.jpeg
        return lambda side: _rotate(_preview(data, side), page.rotation)
    if page.jpx is not None:
        data = page.jpx

        def jpx(side: int) -> Image.Image | None:
            img = _jpx_preview(data, side)
            return None if img is None else _rotate(img, page.rotation)
        return jpx
    return None


def _rotate(img: Image.Image, rotation: int) -> Image.Image:
    """Apply the page's /Rotate (clockwise) to an embedded scan, as a viewer shows it."""
    if rotation % 360 == 0:
        return img
    return img.rotate(-rotation, expand=True)


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]
