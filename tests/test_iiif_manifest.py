"""archive.iiif.manifest on the 16 manifests as libraries published them, each checked
against what SOURCES.csv says of it; and the shapes the specs allow that none of the
16 uses (Choice bodies, collections), written here from the specs' own examples."""

from __future__ import annotations

import csv
import functools
import json
import re

import pytest

from archive.errors import ArchiveError
from archive.iiif.manifest import Book, Collection, loads, parse
from tests.conftest import SHARED_DATA

IIIF = SHARED_DATA / "iiif"
ROWS = list(csv.DictReader((IIIF / "SOURCES.csv").open(encoding="utf-8"))) if (
    IIIF / "SOURCES.csv").is_file() else []
BY_FILE = pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
# SOURCES.csv's rights_statement names fields as the specs do
RIGHTS_FIELDS = {"license": "license", "attribution": "attribution", "rights": "rights",
                 "requiredStatement": "required_statement"}


@functools.cache
def book(file: str) -> Book:
    if not IIIF.is_dir():
        pytest.skip(f"real IIIF manifests not found at {IIIF} (set BORDE_SHARED_DATA)")
    found = loads((IIIF / "manifests" / file).read_bytes(), name=file)
    assert isinstance(found, Book)
    return found


def expected_services(column: str) -> set[tuple[str, int]]:
    """"1.1 [1.1 compliance URI] L2; 2 [1.0 compliance URI] L1 (...)" -> {("1.1", 2),
    ("2", 1)}: the versions and levels the painting images' services have."""
    found = {(m.group(1), int(m.group(2)))
             for part in column.split(";")
             for m in [re.match(r"\s*(1\.1|2|3)\b.*?\bL([012])\b", part)] if m}
    assert found, column
    return found


@BY_FILE
def test_counts_and_versions(row: dict) -> None:
    b = book(row["file"])
    assert b.id == row["manifest_id"]
    assert b.version == row["presentation_version"].split(".")[0]
    assert len(b.canvases) == int(row["canvases"])
    assert [c.index for c in b.canvases] == list(range(len(b.canvases)))
    assert b.ranges == int(row["ranges"])
    assert b.title


@BY_FILE
def test_image_services(row: dict) -> None:
    b = book(row["file"])
    found = {(s.version, s.level) for c in b.canvases for s in c.services}
    assert found == expected_services(row["image_api"])
    for canvas in b.canvases:
        if canvas.services:
            assert canvas.service == canvas.services[0]
        for s in canvas.services:
            assert s.id.startswith("http") and not s.id.endswith(("/", "/info.json"))
            assert list(s.sizes) == sorted(s.sizes)


@BY_FILE
def test_canvases_without_images_are_kept(row: dict) -> None:
    m = re.search(r"\((\d+) canvases without image\)", row["image_api"])
    b = book(row["file"])
    bare = [c for c in b.canvases if c.image_url is None]
    assert len(bare) == (int(m.group(1)) if m else 0)
    assert all(c.service is None and c.label for c in bare)
    assert all(c.image_url and c.service for c in b.canvases if c.image_url)


@BY_FILE
def test_thumbnails(row: dict) -> None:
    m = re.match(r"y \((\d+)/(\d+)\)", row["per_canvas_thumbnails"])
    assert m or row["per_canvas_thumbnails"] == "n"
    thumbs = [c.thumbnail for c in book(row["file"]).canvases if c.thumbnail]
    assert len(thumbs) == (int(m.group(1)) if m else 0)
    assert all(t.startswith("http") for t in thumbs)


@BY_FILE
def test_rights_statement(row: dict) -> None:
    """The fields SOURCES.csv names are there, as text; the others are empty."""
    said = row["rights_statement"]
    named = set() if said == "n" else {RIGHTS_FIELDS[f] for f in said[3:].split(",")}
    b = book(row["file"])
    filled = {f for f in RIGHTS_FIELDS.values() if getattr(b, f)}
    assert filled == named
    for field in ("attribution", "required_statement"):
        assert "<" not in getattr(b, field) and "\n" not in getattr(b, field)


@BY_FILE
def test_languages_and_labels(row: dict) -> None:
    b = book(row["file"])
    assert b.languages == tuple(sorted(row["languages"].split()))
    assert all(isinstance(c.label, str) for c in b.canvases)


def test_several_languages_give_one_string() -> None:
    rik = book("riksarkivet_arkis-00147269.json")
    assert rik.canvases[0].label == "Image 1"  # {"sv": ["Bild 1"], "en": ["Image 1"]}
    assert rik.date == "1896-1905"  # metadata "Date" / "Datering"
    # the same attribution in en, de and zh: the English one, once
    assert book("mdz_bsb10502296_00009_u001.json").attribution == "Bayerische Staatsbibliothek"
    assert book("heidelberg_schinkel1858tafeln1.json").attribution == (
        "Heidelberg University Library")
    assert book("internetarchive_masterhighwaypla00char.json").canvases[0].label == "1"
    assert book("europeana_BibliographicResource_3000126341277.json").title == (
        "Uusi Aura, nr: 274A - 1909-11-26")  # [{"@value": ...}] without a language


def test_html_and_statements_become_text() -> None:
    bodleian = book("bodleian_390fd0e8-arch-g-c7.json")
    assert "Terms of use: CC-BY-NC 4.0." in bodleian.attribution
    assert book("bl_vdc_100022545251.json").attribution == "Public Domain"
    assert book("yale_16371215.json").required_statement == (
        "Provider: Yale University Library")
    assert book("biblissima_florus-dispersus.json").license.split() == [
        "http://creativecommons.org/licenses/by-nc/4.0/",
        "https://gallica.bnf.fr/html/und/conditions-dutilisation-des-contenus-de-gallica"]


def test_dates() -> None:
    assert book("bnf-gallica_btv1b7100627v.json").date == "1300-1400"
    assert book("yale_16371215.json").date == "1460-01-01T00:00:00Z"  # navDate first
    assert book("stanford_fg165hz3589.json").date == ""  # "PublishDate": the scan's


def test_image_resource_and_service_details() -> None:
    w = book("wellcome_b18035723.json").canvases[0]
    # the body is a 742 px derivative; the service serves the 2569 px image
    assert (w.image_width, w.image_height) == (742, 1024)
    assert (w.service.width, w.service.height) == (2569, 3543)
    assert w.service.id == "https://iiif.wellcomecollection.org/image/b18035723_0001.JP2"
    gallica = book("bnf-gallica_btv1b7100627v.json").canvases[0].service
    assert (gallica.version, gallica.level) == ("1.1", 2)
    sfo = book("sfomuseum_1762679999.json").canvases[0].service
    assert sfo.id == "https://static.sfomuseum.org/media/176/270/383/1/tiles"
    assert (sfo.version, sfo.level) == ("2", 0)
    rik = book("riksarkivet_arkis-00147269.json").canvases[0]
    assert [s.version for s in rik.services] == ["3", "2"]  # both level 1: the newer first
    assert rik.services[1].id == "https://lbiiif.riksarkivet.se/v2/arkis!00147269_00001"


# ---- shapes none of the 16 uses, from the specs' examples ----------------------------

P2 = "http://iiif.io/api/presentation/2/context.json"
P3 = "http://iiif.io/api/presentation/3/context.json"


def v2_manifest(resource: dict) -> dict:
    canvas = {"@id": "https://x.org/c1", "@type": "sc:Canvas", "width": 100, "height": 80,
              "label": [{"@value": "Seite 1", "@language": "de"},
                        {"@value": "Page 1", "@language": "en"}],
              "images": [{"@type": "oa:Annotation", "motivation": "sc:painting",
                          "resource": resource, "on": "https://x.org/c1"}]}
    return {"@context": P2, "@id": "https://x.org/m", "@type": "sc:Manifest",
            "label": "Book", "sequences": [{"@type": "sc:Sequence", "canvases": [canvas]}]}


def test_v2_choice_and_service_list() -> None:
    resource = {"@type": "oa:Choice",
                "default": {"@id": "https://x.org/a.jpg", "@type": "dctypes:Image",
                            "width": 100, "height": 80,
                            "service": [{"@id": "https://x.org/auth", "profile":
                                         "http://iiif.io/api/auth/0/login"},
                                        {"@context": "http://iiif.io/api/image/2/context.json",
                                         "@id": "https://x.org/iiif/a/info.json",
                                         "profile": ["http://iiif.io/api/image/2/level2.json",
                                                     {"maxWidth": 50}]}]},
                "item": [{"@id": "https://x.org/b.jpg", "@type": "dctypes:Image"}]}
    b = parse(v2_manifest(resource))
    c = b.canvases[0]
    assert (c.label, c.image_url, c.image_width) == ("Page 1", "https://x.org/a.jpg", 100)
    assert len(c.services) == 1  # the auth service is no image service
    assert (c.service.id, c.service.version, c.service.level) == ("https://x.org/iiif/a", "2", 2)
    assert c.service.max_width == 50  # v2 puts max* in the profile's description


def test_service_without_a_level_is_level_1() -> None:
    resource = {"@id": "https://x.org/a.jpg", "service": {
        "@context": "http://iiif.io/api/image/2/context.json", "@id": "https://x.org/s/"}}
    s = parse(v2_manifest(resource)).canvases[0].service
    assert (s.id, s.version, s.level) == ("https://x.org/s", "2", 1)


def test_v3_choice_body() -> None:
    body = {"type": "Choice", "items": [
        {"id": "https://x.org/natural.jpg", "type": "Image", "width": 10, "height": 20,
         "service": [{"id": "https://x.org/iiif3/n", "type": "ImageService3",
                      "profile": "level0", "sizes": [{"width": 5, "height": 10},
                                                     {"width": 2, "height": 4}]}]},
        {"id": "https://x.org/xray.jpg", "type": "Image"}]}
    doc = {"@context": P3, "id": "https://x.org/m3", "type": "Manifest",
           "label": {"fr": ["Livre"]}, "rights": "http://rightsstatements.org/vocab/InC/1.0/",
           "requiredStatement": {"label": {"en": ["Attribution"]},
                                 "value": {"en": ["<b>Provided</b> by X &amp;<br/>Y"]}},
           "items": [{"id": "https://x.org/c1", "type": "Canvas", "width": 10, "height": 20,
                      "items": [{"type": "AnnotationPage", "items": [
                          {"type": "Annotation", "motivation": "painting", "body": body}]}]},
                     {"id": "https://x.org/c2", "type": "Canvas", "label": {"none": ["2"]}}]}
    b = parse(doc)
    assert (b.version, b.title, b.languages) == ("3", "Livre", ("en", "fr"))
    assert b.required_statement == "Attribution: Provided by X & Y"
    first, second = b.canvases
    assert first.image_url == "https://x.org/natural.jpg"
    assert first.service.sizes == ((2, 4), (5, 10)) and first.service.level == 0
    assert (second.image_url, second.label, second.width) == (None, "2", 0)


def test_nested_ranges_are_counted() -> None:
    """3.0 nests ranges inside ranges (2.x lists them flat, as all 16 do); a range in
    ``structures`` counts whatever it calls itself, as Göttingen's "sc:Canvas" ones."""
    canvas = {"id": "https://x.org/c1", "type": "Canvas"}
    leaf = {"id": "https://x.org/r3", "type": "Range", "items": [canvas]}
    doc = {"@context": P3, "id": "https://x.org/m", "type": "Manifest", "items": [],
           "structures": [{"id": "https://x.org/r1", "type": "Range", "items": [
               canvas, {"id": "https://x.org/r2", "type": "Range", "items": [leaf]}]},
               {"id": "https://x.org/r4", "type": "Canvas"}]}
    assert parse(doc).ranges == 4


def test_v3_service_without_type() -> None:
    body = {"id": "https://x.org/a.jpg", "type": "Image",
            "service": [{"id": "https://x.org/s3", "profile": "level2"}]}
    doc = {"@context": P3, "id": "https://x.org/m", "type": "Manifest", "items": [
        {"id": "https://x.org/c1", "type": "Canvas", "items": [{"type": "AnnotationPage",
         "items": [{"type": "Annotation", "motivation": "painting", "body": body}]}]}]}
    s = parse(doc).canvases[0].service
    assert (s.id, s.version, s.level) == ("https://x.org/s3", "3", 2)


def test_collections_v2_and_v3() -> None:
    v2 = {"@context": P2, "@id": "https://x.org/top", "@type": "sc:Collection",
          "label": "Top", "collections": [{"@id": "https://x.org/sub",
                                           "@type": "sc:Collection"}],
          "manifests": [{"@id": "https://x.org/m1", "@type": "sc:Manifest"},
                        "https://x.org/m2"]}
    c = parse(v2)
    assert isinstance(c, Collection) and c.title == "Top"
    assert c.members == ("https://x.org/sub", "https://x.org/m1", "https://x.org/m2")
    assert c.member_kinds == ("collection", "manifest", "manifest")
    members = parse({"@context": P2, "@id": "https://x.org/t", "@type": "sc:Collection",
                     "members": [{"@id": "https://x.org/m1", "@type": "sc:Manifest"},
                                 {"@id": "https://x.org/s", "@type": "sc:Collection"}]})
    assert members.member_kinds == ("manifest", "collection")
    v3 = parse({"@context": P3, "id": "https://x.org/t3", "type": "Collection",
                "label": {"en": ["Books"]},
                "items": [{"id": "https://x.org/c", "type": "Collection"},
                          {"id": "https://x.org/m", "type": "Manifest"}]})
    assert (v3.title, v3.members) == ("Books", ("https://x.org/c", "https://x.org/m"))
    assert v3.member_kinds == ("collection", "manifest")


@pytest.mark.parametrize("data", [b'{"@context": "http://iiif.io/api/image/2/context.json"}',
                                  b"[1, 2]", b'{"type": "Canvas"}', b'"manifest"'])
def test_other_json_is_not_a_manifest(data: bytes) -> None:
    with pytest.raises(ArchiveError) as caught:
        loads(data, name="/srv/in/thing.json")
    assert (caught.value.code, caught.value.fields) == ("not_manifest", {"name": "thing.json"})


@pytest.mark.parametrize("data", [b"<html>Not found</html>", b"", b"\xff\xfe{", b'{"a":'])
def test_unreadable(data: bytes) -> None:
    with pytest.raises(ArchiveError) as caught:
        loads(data, name="manifest.json")
    assert caught.value.code == "manifest_unreadable"


def test_loads_equals_parse() -> None:
    data = (IIIF / "manifests" / "stanford_fg165hz3589.json").read_bytes()
    assert loads(data) == parse(json.loads(data))
