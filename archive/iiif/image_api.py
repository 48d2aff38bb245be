"""IIIF Image API 1.1, 2 and 3 request URLs: a whole page small, or a region of it.

Why here and not in a client library: what to ask for depends on what the server
promises (its version, compliance level, listed sizes and max* limits), and asking
for more than it promises is an error page instead of an image. The URL is
``{id}/{region}/{size}/{rotation}/{quality}.{format}`` in every version; what changes:

- the whole image at full size is ``full`` in 1.1 and 2, ``max`` in 3;
- the quality that changes nothing is ``native`` in 1.1, ``default`` in 2 and 3;
- on level 1 and 2 any ``w,`` size may be asked for; on level 0 only the ``sizes``
  listed, in their canonical form (2: ``w,``; 3: ``w,h``), and no regions;
- 3 never scales up without ``^``, so no size here exceeds the image's (or region's).
"""

from __future__ import annotations

import math

from archive.errors import BadPage
from archive.iiif.manifest import ImageService, service_from_json

FULL_SIZE = {"1.1": "full", "2": "full", "3": "max"}  # Image API 1.1 §4.2, 2.1 §4.2, 3.0 §4.2
QUALITY = {"1.1": "native", "2": "default", "3": "default"}  # 1.1 §4.4, 2.1 §4.4, 3.0 §4.4
FORMAT = "jpg"  # every level of every version must serve jpg


def info_url(service: ImageService) -> str:
    """Where the service describes itself."""
    return f"{service.id}/info.json"


def parse_info(data: dict) -> ImageService:
    """The service an info.json (1.1, 2 or 3) describes; ``BadPage`` when it names none,
    for the page whose image it should have served."""
    service = service_from_json(data) if isinstance(data, dict) else None
    if service is None or not service.id:
        raise BadPage("the image service's info.json names no image")
    return service


def full_size(service: ImageService) -> tuple[int, int] | None:
    """The image's own (width, height), when the service says."""
    if service.width and service.height:
        return service.width, service.height
    return None


def supports_regions(service: ImageService) -> bool:
    """Region requests are required from level 1 on, in 1.1, 2 and 3."""
    return service.level >= 1


def preview_url(service: ImageService, width: int) -> tuple[str, tuple[int, int]]:
    """The whole image at least ``width`` px wide where allowed, as small as allowed,
    and the (width, height) the answer should have (height 0 when the service gives
    no size)."""
    if width < 1:
        raise ValueError(f"a preview needs a width of 1 px or more, not {width}")
    if service.level == 0:
        return _listed_size(service, width)
    full = full_size(service)
    top = _widest(service, full)
    w = width if top is None else min(width, top)
    if full and w == full[0]:
        return _url(service, "full", FULL_SIZE[service.version]), full
    return _url(service, "full", f"{w},"), (w, _height(w, full))


def region_url(service: ImageService, box: tuple[int, int, int, int], width: int) -> str:
    """``box`` (x, y, w, h in full-image pixels) scaled to ``width`` px wide, never
    wider than the region itself or than the service's max* allow; level 1 and up."""
    if not supports_regions(service):
        raise ValueError(f"{service.id} is level 0: it cuts no regions")
    x, y, w, h = (int(v) for v in box)
    full = full_size(service)
    if full:  # the server would crop the region to the image: so does the size asked
        w, h = min(w, full[0] - x), min(h, full[1] - y)
    if x < 0 or y < 0 or w < 1 or h < 1 or width < 1:
        raise ValueError(f"no pixels in region {box} at width {width}")
    top = _widest(service, (w, h))
    out = min(width, w if top is None else top)
    return _url(service, f"{x},{y},{w},{h}", f"{out},")


def _listed_size(service: ImageService, width: int) -> tuple[str, tuple[int, int]]:
    """Level 0: the smallest listed size at least ``width`` wide, else the largest;
    with no sizes listed, the full image (the one size level 0 must serve)."""
    if not service.sizes:
        return _url(service, "full", FULL_SIZE[service.version]), full_size(service) or (0, 0)
    w, h = next((s for s in service.sizes if s[0] >= width), service.sizes[-1])
    size = f"{w},{h}" if service.version == "3" else f"{w},"
    return _url(service, "full", size), (w, h)


def _widest(service: ImageService, source: tuple[int, int] | None) -> int | None:
    """The widest answer allowed for an image or region of ``source`` pixels: no wider
    than itself, nor than maxWidth, maxHeight (which is maxWidth when only that is
    given: 2.1 and 3.0 alike) or maxArea allow; None when nothing caps it."""
    caps = [c for c in (source[0] if source else None, service.max_width) if c]
    max_height = service.max_height or service.max_width
    if source and max_height:
        caps.append(max(1, math.floor(max_height * source[0] / source[1])))
    if source and service.max_area:
        w = max(1, math.floor(math.sqrt(service.max_area * source[0] / source[1])))
        while w > 1 and w * _height(w, source) > service.max_area:
            w -= 1  # the rounded height can tip the area over
        caps.append(w)
    return min(caps) if caps else None


def _height(width: int, source: tuple[int, int] | None) -> int:
    """The height a ``w,`` request comes back with: the aspect ratio kept, rounded."""
    if not source:
        return 0
    return max(1, round(width * source[1] / source[0]))


def _url(service: ImageService, region: str, size: str) -> str:
    return f"{service.id}/{region}/{size}/0/{QUALITY[service.version]}.{FORMAT}"
