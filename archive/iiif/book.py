"""A IIIF manifest read as a book: the reader's counterpart of an open PDF.

Why: a library's image server gives any page at any size, and any region of it. The
finder reads a small preview of each page; only the pictures it keeps are fetched at
the size the dataset needs, and only their own pixels (region requests on level 1 and
2; on level 0, the smallest listed size that serves the crop). A PDF of the same book
is several GB, and the whole of it must be downloaded first.

``IIIFBook`` and ``IIIFPage`` answer what the pipeline asks of ``pymupdf.Document`` and
``archive.reader.Page``: a page count, a preview, the full size, the page (or the parts
of it that hold the crops) at a given size.
"""

from __future__ import annotations

import io
import json
import math
import re
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import numpy as np
from PIL import Image

from archive import reader
from archive.errors import ArchiveError, BadPage
from archive.iiif import image_api
from archive.iiif.manifest import Book, Canvas, Collection, ImageService, loads
from archive.resize import crop_px

MAX_DEPTH = 3  # collections within collections: libraries nest one or two deep
MAX_MANIFEST_BYTES = 32 << 20  # the biggest shared manifest (920 canvases) is 1.5 MB
NOT_FETCHED = "image not fetched"  # a page's reason that --resume fetches again
_fetched: dict[str, Book | Collection] = {}  # URL -> document, while a build keeps them
_keeping = 0  # builds running in this process (``kept_documents``)
_keeping_lock = threading.Lock()
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
# URL path parts that name no book: what is left names the source
_GENERIC = {"manifest", "manifest.json", "iiif", "presentation", "v2", "v3", "2", "3",
            "metadata", "id", "item", "items", "objects", "api", "json", "collection"}


def is_url(address: str | Path) -> bool:
    return bool(_URL.match(str(address)))


def is_iiif(address: str | Path) -> bool:
    """A URL, or a local ``.json`` file: a manifest (or a collection) rather than a PDF."""
    return is_url(address) or str(address).lower().endswith(".json")


def source_stem(address: str) -> str:
    """The part of a manifest's address that names the book (``bsb10502296``, not
    ``manifest``): a source name that stays the same from one build to the next."""
    if not is_url(address):
        return Path(address).stem
    parts = [p for p in urlsplit(address).path.split("/") if p]
    named = [p for p in parts if p.lower() not in _GENERIC]
    last = (named or parts or [urlsplit(address).hostname or "manifest"])[-1]
    return re.sub(r"\.json$", "", last, flags=re.IGNORECASE)


def read_document(address: str) -> Book | Collection:
    """A manifest or a collection, from its URL (through the safe fetcher) or a file.

    Inside ``kept_documents`` (a build) a URL's document is fetched once: the build's
    worker processes, forked after the build read it, open the same book from memory (a
    big library's manifest is megabytes: three fetches and parses at 2 workers)."""
    if is_url(address):
        if _keeping and address in _fetched:
            from archive.iiif import http

            http.check_url(address)  # judged again: the setting, or the host's DNS, may differ
            return _fetched[address]
        doc = loads(_get(address, MAX_MANIFEST_BYTES), name=source_stem(address) + ".json")
        if _keeping:
            _fetched[address] = doc
        return doc
    path = Path(address)
    if not path.is_file():
        raise ArchiveError(f"{path}: no such file", code="no_file", name=path.name)
    if path.stat().st_size == 0:
        raise ArchiveError(f"{path.name}: the file is empty", code="empty", name=path.name)
    return loads(path.read_bytes(), name=path.name)


@contextmanager
def kept_documents() -> Iterator[None]:
    """While a build runs, each manifest it reads is fetched once (``read_document``);
    outside one, every read fetches: a curator may have just mended the manifest."""
    global _keeping
    with _keeping_lock:
        _keeping += 1
    try:
        yield
    finally:
        with _keeping_lock:
            _keeping -= 1
            if not _keeping:
                _fetched.clear()


def kept() -> dict[str, Book | Collection]:
    """The documents this build has read, for its spawned workers (``keep``)."""
    return dict(_fetched)


def keep(documents: dict[str, Book | Collection]) -> None:
    """In a build's spawned worker process: its build's documents, read from memory for
    the process's life (it lives as long as the build); a forked one inherits them."""
    global _keeping
    with _keeping_lock:
        _keeping += 1
        _fetched.update(documents)


def manifests(address: str, depth: int = 0) -> list[tuple[str, Book]]:
    """Every manifest an address stands for, in order: itself, or a collection's members
    (and theirs, ``MAX_DEPTH`` deep)."""
    doc = read_document(address)
    if isinstance(doc, Book):
        return [(address, doc)]
    if depth >= MAX_DEPTH:
        return []
    found: list[tuple[str, Book]] = []
    for member in doc.members:
        if is_url(address):  # a collection on the web names web addresses, never this
            member = urljoin(address, member)  # server's files (a path resolves to a URL)
        found.extend(manifests(member, depth + 1))
    return found


def books(address: str) -> list[tuple[str, Book]]:
    """``manifests``, and an ``ArchiveError`` for a collection with none: what a build or
    the tab's look at a book starts from."""
    found = manifests(address)
    if not found:
        name = source_stem(address)
        raise ArchiveError(f"{name}: the collection has no manifest with images",
                           code="manifest_no_images", name=name)
    return found


def each_book(paths: list[str | Path]) -> list[str | Path]:
    """The inputs with each IIIF collection replaced by its manifests' addresses (each
    document fetched once)."""
    out: list[str | Path] = []
    for p in paths:
        out.extend([a for a, _ in manifests(str(p))] if is_iiif(p) else [p])
    return out


class IIIFBook:
    """An opened manifest: ``page_count`` canvases, each read by ``read_page``."""

    def __init__(self, address: str, book: Book | None = None) -> None:
        self.address = address
        if book is None:
            doc = read_document(address)
            if not isinstance(doc, Book):
                name = source_stem(address)
                raise ArchiveError(f"{name}: a collection, not one book", code="not_manifest",
                                   name=name)
            book = doc
        if not any(c.image_url or c.service for c in book.canvases):
            name = source_stem(address)
            raise ArchiveError(f"{name}: the manifest has no page with an image",
                               code="manifest_no_images", name=name)
        self.book = book
        self._next: list[int] = []  # the pages this process reads next (``ahead``)
        self._side = 0
        self._fetching: dict[int, Future] = {}
        self._thread: ThreadPoolExecutor | None = None  # made on first use, in this process

    def __getstate__(self) -> dict:
        return {"address": self.address, "book": self.book}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["address"], state["book"])

    @property
    def page_count(self) -> int:
        return len(self.book.canvases)

    def close(self) -> None:
        """Stop fetching ahead; the fetcher's pooled connections serve the next book."""
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)
            self._thread = None
        self._fetching.clear()

    def ahead(self, indices: list[int], preview_side: int) -> None:
        """The pages this process reads next, in order (a worker's chunk): each one's
        preview is fetched while the one before it is looked at, so the wait on the
        server overlaps the work on the page (measured on ``bench/iiif_bench.py``'s book:
        the build kept the 2 cores 81% busy against the PDF's 93%)."""
        self._next, self._side = list(indices), preview_side
        for index in [i for i in self._fetching if i not in self._next]:
            self._fetching.pop(index).cancel()  # a chunk given up: its page is not wanted

    def read_page(self, index: int, preview_side: int) -> IIIFPage:
        """The canvas's preview, fetched at the size the finder reads (or already fetched,
        ``ahead``); ``BadPage`` when it has no image or its image cannot be had."""
        fetching = self._fetching.pop(index, None)
        if preview_side == self._side and index in self._next:
            following = self._next[self._next.index(index) + 1:]
            if following and following[0] not in self._fetching:
                if self._thread is None:
                    self._thread = ThreadPoolExecutor(1, thread_name_prefix="iiif-ahead")
                self._fetching[following[0]] = self._thread.submit(
                    self._fetched, following[0], preview_side)
        if fetching is not None:
            return fetching.result()
        return self._fetched(index, preview_side)

    def _fetched(self, index: int, preview_side: int) -> IIIFPage:
        canvas = self.book.canvases[index]
        if not (canvas.image_url or canvas.service):
            raise BadPage("canvas without an image")
        try:
            service = canvas.service
            if not _sized_by_resource(canvas):
                service = _described(service)
            width, height = _full_size(canvas, service)
            page = IIIFPage(index, canvas, service, width, height, origin(self.book, canvas))
            page.preview = page.whole_at(_preview_width(width, height, preview_side))
            return page
        except ArchiveError as exc:
            raise BadPage(f"{NOT_FETCHED} ({exc})") from None


@dataclass
class IIIFPage:
    """One canvas: its preview, its full size, and its pixels at any size on demand."""

    index: int
    canvas: Canvas
    service: ImageService | None
    width: int
    height: int
    origin: dict = field(default_factory=dict)
    preview: Image.Image | None = None
    # what reader.Page has and a IIIF page does not: no embedded scan, no text layer
    doc: None = None
    jpeg: None = None
    jpx: None = None
    rotation: int = 0
    scale: float = 1.0
    image_only: bool = True
    _whole: bytes | None = None  # the image as is, for a canvas without a service
    _urls: dict = field(default_factory=dict)  # box -> the URL its pixels came from

    @property
    def number(self) -> int:
        return self.index + 1

    def closer_at(self, side: int) -> Image.Image:
        """The page again with a long side of ``side`` (``figures.CLOSER``)."""
        return self.whole_at(_preview_width(self.width, self.height, side))

    def whole_at(self, width: int) -> Image.Image:
        """The whole page at least ``width`` px wide, as small as the server allows."""
        if self.service is None:
            self._urls[None] = self.canvas.image_url or ""
            if self._whole is None:  # the image as is: fetched once a page
                self._whole = _get(self._urls[None])
            return _decoded(self._whole, width, self.width, self.height)
        url, _size = image_api.preview_url(self.service, width)
        self._urls[None] = url
        return _decoded(_get(url), width, self.width, self.height)

    def full(self, need: tuple[int, int] | None = None) -> Image.Image:
        return Image.fromarray(self.full_array(need))

    def full_array(self, need: tuple[int, int] | None = None,
                   boxes: list[tuple[float, ...]] | None = None) -> np.ndarray:
        """The page at ``need`` (width, height; full size without one), as RGB. With
        ``boxes`` (fractions of the page) on a server that cuts regions, only their pixels
        are fetched: the rest of the array is black, and nothing reads it."""
        nw, nh = need or (self.width, self.height)
        try:
            if boxes and self.service is not None and image_api.supports_regions(self.service):
                return self._regions(boxes, nw, nh)
            return _fitted(self.whole_at(nw), nw, nh)
        except ArchiveError as exc:
            raise BadPage(f"{NOT_FETCHED} ({exc})") from None

    def image_of(self, box: tuple[float, ...]) -> str:
        """The URL a crop's pixels came from (its region's, or the whole image's)."""
        return self._urls.get(tuple(box)) or self._urls.get(None) or self.canvas.image_url or ""

    def _regions(self, boxes: list[tuple[float, ...]], nw: int, nh: int) -> np.ndarray:
        self._describe()
        arr = np.zeros((nh, nw, 3), np.uint8)
        for box in boxes:
            x0, y0, x1, y1 = crop_px((nw, nh), box)  # as crop_array cuts it
            fx0, fy0 = math.floor(x0 * self.width / nw), math.floor(y0 * self.height / nh)
            fx1 = min(self.width, math.ceil(x1 * self.width / nw))
            fy1 = min(self.height, math.ceil(y1 * self.height / nh))
            url = image_api.region_url(self.service, (fx0, fy0, fx1 - fx0, fy1 - fy0), x1 - x0)
            self._urls[tuple(box)] = url
            part = _decoded(_get(url), x1 - x0, fx1 - fx0, fy1 - fy0)
            arr[y0:y1, x0:x1] = _fitted(part, x1 - x0, y1 - y0)
        return arr

    def _describe(self) -> None:
        """The service's own size and limits, read from its info.json before a region is
        cut in its pixels: the preview needed only the image resource's size
        (``_sized_by_resource``), so a text page never asks for it."""
        if self.service is not None and not image_api.full_size(self.service):
            self.service = _described(self.service)
            self.width, self.height = _full_size(self.canvas, self.service)


def origin(book: Book, canvas: Canvas) -> dict:
    """What ``metadata.jsonl`` says of where a picture came from and on what terms; empty
    values left out. ``image`` is filled in per crop (``IIIFPage.image_of``)."""
    row = {"title": book.title, "date": plain_date(book.date), "attribution": book.attribution,
           "license": book.license, "rights": book.rights,
           "required_statement": book.required_statement, "label": canvas.label,
           "manifest": book.id, "canvas": canvas.id}
    return {k: v for k, v in row.items() if v}


_NAV_YEAR = re.compile(r"^(-?\d{4})-01-01T00:00:00(?:Z|[+-]00:?00)?$")
_NAV_DAY = re.compile(r"^(-?\d{4}-\d{2}-\d{2})T")


def plain_date(date: str) -> str:
    """A ``navDate`` as a caption says it: "1891" for the first instant of a year (how
    libraries give a year as an xsd:dateTime), the day for any other instant."""
    if m := _NAV_YEAR.match(date):
        return m.group(1)
    if m := _NAV_DAY.match(date):
        return m.group(1)
    return date


def _described(service: ImageService | None) -> ImageService | None:
    """The service with its size (and, on level 0, its sizes) known: read from its
    info.json when the manifest does not say."""
    if service is None:
        return None
    if service.width and service.height and (service.level > 0 or service.sizes):
        return service
    info = image_api.parse_info(json.loads(_get(image_api.info_url(service))))
    # the address the manifest gave, which this client reached: an info.json may name
    # the server's inside host, or http for https
    return replace(info, id=service.id)


def _sized_by_resource(canvas: Canvas) -> bool:
    """Whether a page's preview can be asked for before its info.json: a service that
    names its version and a level that cuts sizes and regions (>= 1; a silent one may be
    1.1, whose URLs differ), and the image resource's own pixel size in the manifest (the
    same as the service's on every shared manifest that gives both). Only pages with
    pictures then ask for the info.json, when their regions are cut: about one in three
    of a book's pages, not each."""
    service = canvas.service
    return (service is not None and service.stated and service.level >= 1
            and not image_api.full_size(service)
            and bool(canvas.image_width and canvas.image_height))


def _full_size(canvas: Canvas, service: ImageService | None) -> tuple[int, int]:
    """The image's own pixel size: its service's, else the image resource's, else the
    canvas's (they are the same on every shared manifest that gives more than one)."""
    for w, h in ((service.width, service.height) if service else (None, None),
                 (canvas.image_width, canvas.image_height), (canvas.width, canvas.height)):
        if w and h:
            return int(w), int(h)
    raise BadPage("the image's size is not given")


def _preview_width(width: int, height: int, side: int) -> int:
    """The width of the preview the PDF reader decodes from the same scan as a JPEG: the
    smallest DCT scale (in eighths) whose long side is still ``side``, so the finder sees
    a book at the same scale whichever way it came (measured: an exact long side of
    ``side`` instead moved 3 of 14 kept boxes on 40 early pages to IoU 0.44-0.79)."""
    need_w, need_h = reader.draft_size(width, height, side)
    for eighths in range(1, 9):
        w, h = -(-width * eighths // 8), -(-height * eighths // 8)
        if w >= need_w and h >= need_h:
            return w
    return width


def _get(url: str, max_bytes: int | None = None) -> bytes:
    """One answer's body, through this process's safe fetcher. httpx is imported here, on
    the first fetch: a PDF build never pays for it (5.6 MB and 80 ms a process)."""
    from archive.iiif import http

    return http.fetcher().get(url, max_bytes=max_bytes).content


def _decoded(data: bytes, width: int, full_w: int, full_h: int) -> Image.Image:
    """An answer decoded as RGB, no smaller than ``width`` wide unless it is smaller
    itself; a JPEG decodes at the smallest DCT scale that serves (as the PDF reader's)."""
    need_h = max(1, round(width * full_h / max(1, full_w)))
    img = _opened(data, (width, need_h))
    if img.width > 1.5 * width:  # a level-0 size, or a server that gave more than asked
        img = img.resize((width, need_h), Image.Resampling.LANCZOS, reducing_gap=2.0)
    return img


def _opened(data: bytes, draft: tuple[int, int] | None = None) -> Image.Image:
    """Any image a server sent, as RGB; ``BadPage`` for one that is not an image or is
    over the reader's pixel limit (a decompression bomb)."""
    try:
        img = Image.open(io.BytesIO(data))
        if draft and img.format == "JPEG":
            img.draft("RGB", draft)
        if img.width * img.height > reader.MAX_PIXELS:
            raise BadPage(f"image {img.width}x{img.height} px is over the "
                          f"{reader.MAX_PIXELS:,} px limit (BORDE_MAX_PIXELS)")
        img = img.convert("RGB")
        img.load()
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise BadPage(f"unreadable image ({type(exc).__name__})") from None
    return img


def _fitted(img: Image.Image, w: int, h: int) -> np.ndarray:
    """``img`` as an array of exactly (h, w): servers round a scaled size either way."""
    if img.size != (w, h):
        img = img.resize((w, h), Image.Resampling.LANCZOS)
    return np.asarray(img.convert("RGB"))


@dataclass
class BookPreview:
    """What the tab shows of a manifest before the build: its title, its pages and a few
    of them small. A collection: its first book's title and every book's pages."""

    title: str
    books: int
    pages: int
    thumbnails: list[Image.Image]


THUMB_WIDTH = 160  # the tab's thumbnails: small enough to cost a few KB each
THUMBS = 6


def preview_book(address: str, count: int = THUMBS, width: int = THUMB_WIDTH) -> BookPreview:
    """The book's title, page count and first ``count`` pages small, fetched through the
    safe fetcher (a page with no thumbnail and no image service is not fetched whole for
    this). Raises ``ArchiveError`` for an address or a manifest that cannot be read."""
    found = books(address)
    first = found[0][1]
    thumbs: list[Image.Image] = []
    for canvas in first.canvases:
        if len(thumbs) >= count:
            break
        try:
            thumb = _thumbnail(canvas, width)
        except (ArchiveError, BadPage):
            continue  # a page the server will not give is told when the build reaches it
        if thumb is not None:
            thumbs.append(thumb)
    return BookPreview(first.title or source_stem(found[0][0]), len(found),
                       sum(len(b.canvases) for _, b in found), thumbs)


def _thumbnail(canvas: Canvas, width: int) -> Image.Image | None:
    if canvas.service is not None:
        service = _described(canvas.service)
        w, h = _full_size(canvas, service)
        return _decoded(_get(image_api.preview_url(service, width)[0]), width, w, h)
    if canvas.thumbnail:
        img = _opened(_get(canvas.thumbnail), (width, width))
        img.thumbnail((width, 4 * width))
        return img
    return None
