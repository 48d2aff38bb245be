"""archive.iiif.image_api: request URLs written out by hand from the Image API 1.1, 2.1
and 3.0 specs (URL syntax, the ``full``/``max`` size, ``native``/``default`` quality,
level-0 ``sizes``, max* limits), info.json in the specs' own shapes, and every shared
manifest's first image."""

from __future__ import annotations

import csv

import pytest

from archive.errors import BadPage
from archive.iiif.image_api import (
    full_size,
    info_url,
    parse_info,
    preview_url,
    region_url,
    supports_regions,
)
from archive.iiif.manifest import Book, ImageService, loads
from tests.conftest import SHARED_DATA

ID = "https://example.org/image-service/abcd1234"
SIZES = ((150, 100), (600, 400), (3000, 2000))  # the 2.1 spec's example sizes

# info.json as the three specs show it (the 1.1 spec's §5, 2.1's §5.1, 3.0's §5)
INFO_11 = {"@context": "http://library.stanford.edu/iiif/image-api/1.1/context.json",
           "@id": ID, "width": 6000, "height": 4000, "scale_factors": [1, 2, 4],
           "tile_width": 1024, "tile_height": 1024, "formats": ["jpg", "png"],
           "qualities": ["native", "grey"],
           "profile": "http://library.stanford.edu/iiif/image-api/1.1/compliance.html#level0"}
INFO_2 = {"@context": "http://iiif.io/api/image/2/context.json", "@id": ID + "/",
          "protocol": "http://iiif.io/api/image", "width": 6000, "height": 4000,
          "sizes": [{"width": 3000, "height": 2000}, {"width": 150, "height": 100},
                    {"width": 600, "height": 400}],
          "tiles": [{"width": 512, "scaleFactors": [1, 2, 4, 8, 16]}],
          "profile": ["http://iiif.io/api/image/2/level2.json",
                      {"formats": ["gif", "pdf"], "qualities": ["color", "gray"],
                       "maxWidth": 2000, "supports": ["canonicalLinkHeader"]}]}
INFO_3 = {"@context": "http://iiif.io/api/image/3/context.json", "id": ID,
          "type": "ImageService3", "protocol": "http://iiif.io/api/image",
          "profile": "level1", "width": 6000, "height": 4000, "maxWidth": 3000,
          "maxHeight": 2000, "maxArea": 4000000}


def svc(version: str, level: int, **kw: object) -> ImageService:
    return ImageService(id=ID, version=version, level=level,
                        **{"width": 6000, "height": 4000, **kw})


def test_info_url() -> None:
    assert info_url(svc("2", 1)) == f"{ID}/info.json"


def test_parse_info_11() -> None:
    s = parse_info(INFO_11)
    assert (s.id, s.version, s.level, full_size(s)) == (ID, "1.1", 0, (6000, 4000))
    assert (s.sizes, s.max_width, s.max_height, s.max_area) == ((), None, None, None)


def test_parse_info_2() -> None:
    s = parse_info(INFO_2)
    assert (s.id, s.version, s.level, full_size(s)) == (ID, "2", 2, (6000, 4000))
    assert s.sizes == SIZES  # sorted by width, whatever order the server listed
    assert (s.max_width, s.max_height, s.max_area) == (2000, None, None)


def test_parse_info_3() -> None:
    s = parse_info(INFO_3)
    assert (s.id, s.version, s.level, full_size(s)) == (ID, "3", 1, (6000, 4000))
    assert (s.max_width, s.max_height, s.max_area) == (3000, 2000, 4000000)


@pytest.mark.parametrize("data", [{}, {"width": 10, "height": 10}, ["not", "a", "dict"]])
def test_parse_info_without_an_id(data: object) -> None:
    with pytest.raises(BadPage):
        parse_info(data)  # type: ignore[arg-type]


@pytest.mark.parametrize(("version", "level", "url"), [
    ("1.1", 1, f"{ID}/full/1000,/0/native.jpg"),
    ("1.1", 2, f"{ID}/full/1000,/0/native.jpg"),
    ("2", 1, f"{ID}/full/1000,/0/default.jpg"),
    ("2", 2, f"{ID}/full/1000,/0/default.jpg"),
    ("3", 1, f"{ID}/full/1000,/0/default.jpg"),
    ("3", 2, f"{ID}/full/1000,/0/default.jpg"),
])
def test_preview_levels_1_and_2(version: str, level: int, url: str) -> None:
    assert preview_url(svc(version, level), 1000) == (url, (1000, 667))


@pytest.mark.parametrize(("version", "url"), [
    ("1.1", f"{ID}/full/full/0/native.jpg"),
    ("2", f"{ID}/full/full/0/default.jpg"),
    ("3", f"{ID}/full/max/0/default.jpg"),
])
def test_preview_never_above_full_size(version: str, url: str) -> None:
    assert preview_url(svc(version, 2), 9000) == (url, (6000, 4000))
    assert preview_url(svc(version, 2), 6000) == (url, (6000, 4000))
    last = url.rsplit("/", 1)[-1]  # the quality and format
    assert preview_url(svc(version, 2), 5999) == (f"{ID}/full/5999,/0/{last}", (5999, 3999))


def test_preview_without_a_known_size() -> None:
    s = ImageService(id=ID, version="2", level=1)
    assert preview_url(s, 800) == (f"{ID}/full/800,/0/default.jpg", (800, 0))
    assert full_size(s) is None


@pytest.mark.parametrize(("width", "v2", "v3", "size"), [
    (100, "full/150,", "full/150,100", (150, 100)),  # the smallest is already wider
    (500, "full/600,", "full/600,400", (600, 400)),  # the smallest at least as wide
    (600, "full/600,", "full/600,400", (600, 400)),
    (5000, "full/3000,", "full/3000,2000", (3000, 2000)),  # none so wide: the largest
])
def test_level_0_listed_sizes(width: int, v2: str, v3: str, size: tuple[int, int]) -> None:
    assert preview_url(svc("2", 0, sizes=SIZES), width) == (f"{ID}/{v2}/0/default.jpg", size)
    assert preview_url(svc("3", 0, sizes=SIZES), width) == (f"{ID}/{v3}/0/default.jpg", size)


@pytest.mark.parametrize(("version", "url"), [
    ("1.1", f"{ID}/full/full/0/native.jpg"),
    ("2", f"{ID}/full/full/0/default.jpg"),
    ("3", f"{ID}/full/max/0/default.jpg"),
])
def test_level_0_without_sizes_is_the_full_image(version: str, url: str) -> None:
    assert preview_url(svc(version, 0), 300) == (url, (6000, 4000))
    assert preview_url(ImageService(id=ID, version=version, level=0), 300) == (url, (0, 0))


def test_max_width_caps_and_infers_max_height() -> None:
    # 2.1 and 3.0: with maxWidth alone, maxHeight = maxWidth
    assert preview_url(parse_info(INFO_2), 5000) == (f"{ID}/full/2000,/0/default.jpg",
                                                     (2000, 1333))
    portrait = svc("2", 2, width=2000, height=4000, max_width=1000)
    assert preview_url(portrait, 1500) == (f"{ID}/full/500,/0/default.jpg", (500, 1000))


def test_max_area_caps() -> None:
    # 6000 x 4000 within 4,000,000 px: sqrt(4e6 * 1.5) = 2449.5 -> 2449 x 1633
    url, (w, h) = preview_url(parse_info(INFO_3), 5000)
    assert (url, w, h) == (f"{ID}/full/2449,/0/default.jpg", 2449, 1633)
    assert w * h <= 4000000
    assert preview_url(parse_info(INFO_3), 1000)[0] == f"{ID}/full/1000,/0/default.jpg"


def test_max_height_caps() -> None:
    s = svc("3", 2, max_width=6000, max_height=1000)
    assert preview_url(s, 4000) == (f"{ID}/full/1500,/0/default.jpg", (1500, 1000))


@pytest.mark.parametrize(("version", "quality"), [("1.1", "native"), ("2", "default"),
                                                  ("3", "default")])
def test_region(version: str, quality: str) -> None:
    s = svc(version, 1)
    assert region_url(s, (100, 200, 1000, 800), 500) == (
        f"{ID}/100,200,1000,800/500,/0/{quality}.jpg")
    # never above the region's own width (3 would need "^" to scale up)
    assert region_url(s, (100, 200, 1000, 800), 2000) == (
        f"{ID}/100,200,1000,800/1000,/0/{quality}.jpg")


def test_region_cropped_to_the_image_and_capped() -> None:
    assert region_url(svc("2", 2), (5500, 3500, 1000, 1000), 800) == (
        f"{ID}/5500,3500,500,500/500,/0/default.jpg")
    # 3000 x 3000 within maxArea 4,000,000 (and maxHeight 2000): 2000 x 2000
    assert region_url(parse_info(INFO_3), (0, 0, 3000, 3000), 3000) == (
        f"{ID}/0,0,3000,3000/2000,/0/default.jpg")
    with pytest.raises(ValueError):
        region_url(svc("2", 2), (6000, 0, 10, 10), 10)  # wholly outside
    with pytest.raises(ValueError):
        region_url(svc("2", 2), (0, 0, 0, 10), 10)


def test_level_0_cuts_no_regions() -> None:
    s = svc("2", 0, sizes=SIZES)
    assert not supports_regions(s)
    assert supports_regions(svc("1.1", 1)) and supports_regions(svc("3", 2))
    with pytest.raises(ValueError):
        region_url(s, (0, 0, 100, 100), 50)


def test_width_below_one() -> None:
    with pytest.raises(ValueError):
        preview_url(svc("2", 2), 0)


# ---- the shared manifests' own services ------------------------------------------------

IIIF = SHARED_DATA / "iiif"
FILES = [r["file"] for r in csv.DictReader((IIIF / "SOURCES.csv").open(encoding="utf-8"))] \
    if (IIIF / "SOURCES.csv").is_file() else []


@pytest.mark.parametrize("file", FILES)
def test_first_image_of_each_shared_manifest(file: str) -> None:
    book = loads((IIIF / "manifests" / file).read_bytes(), name=file)
    assert isinstance(book, Book)
    canvas = next(c for c in book.canvases if c.service)
    s = canvas.service
    url, (w, _h) = preview_url(s, 800)
    assert url.startswith(f"{s.id}/full/") and url.endswith(
        "/0/native.jpg" if s.version == "1.1" else "/0/default.jpg")
    if s.level >= 1:
        assert url == f"{s.id}/full/800,/0/{url.rsplit('/', 1)[-1]}" and w == 800
        assert region_url(s, (0, 0, 400, 600), 200).startswith(f"{s.id}/0,0,400,600/200,/0/")
    else:
        with pytest.raises(ValueError):
            region_url(s, (0, 0, 400, 600), 200)
