"""The local IIIF servers of tests/iiif_servers.py answer as real IIIF services do (issue #64)."""

from __future__ import annotations

import http.client
import io
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from PIL import Image

from tests import iiif_servers as servers

FIGURES = Path(__file__).resolve().parents[2] / "shared" / "data" / "figures"
# Three ~1000 px pages and two 1600 px pages: both sizes the archive tests read.
IMAGES = sorted((FIGURES / "early" / "images").glob("*.jpg"))[:3] + sorted(
    (FIGURES / "moreno" / "images").glob("*.jpg"))[:2]
STEMS = [p.stem for p in IMAGES]
V2_LEVEL1 = "http://iiif.io/api/image/2/level1.json"


def fetch(url: str) -> tuple[int, dict, bytes]:
    """(status, headers, body) of a GET; HTTP errors are answers, not exceptions."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def jpeg_size(body: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(body)) as image:
        assert image.format == "JPEG"
        return image.size


def image_size(path: Path) -> tuple[int, int]:
    with Image.open(path) as image:
        return image.size


@pytest.fixture(scope="module")
def iip_base(tmp_path_factory: pytest.TempPathFactory) -> str:
    servers.need_iipimage()
    assert IMAGES, f"no test images under {FIGURES}"
    with servers.iipimage(IMAGES, tmp_path_factory.mktemp("iip")) as base:
        yield base


def test_iipimage_info_json_is_image_api_2_level1(iip_base: str) -> None:
    for path, stem in zip(IMAGES, STEMS, strict=True):
        status, headers, body = fetch(f"{iip_base}/{stem}/info.json")
        assert status == 200, body
        info = json.loads(body)
        assert info["@context"] == servers.CONTEXT_IMAGE["2"]
        assert info["@id"] == f"{iip_base}/{stem}"
        assert info["profile"][0] == V2_LEVEL1
        assert (info["width"], info["height"]) == image_size(path)
    assert fetch(f"{iip_base}/no_such_page/info.json")[0] == 404


def test_iipimage_serves_regions_and_sizes(iip_base: str) -> None:
    stem, (width, height) = STEMS[0], image_size(IMAGES[0])
    status, headers, body = fetch(f"{iip_base}/{stem}/10,20,300,400/full/0/default.jpg")
    assert status == 200 and headers["Content-Type"] == "image/jpeg"
    assert jpeg_size(body) == (300, 400)
    assert jpeg_size(fetch(f"{iip_base}/{stem}/10,20,300,400/150,/0/default.jpg")[2]) == (150, 200)
    preview = jpeg_size(fetch(f"{iip_base}/{stem}/full/!200,200/0/default.jpg")[2])
    assert max(preview) == 200 and abs(preview[0] / preview[1] - width / height) < 0.01
    assert jpeg_size(fetch(f"{iip_base}/{stem}/full/max/0/default.jpg")[2]) == (width, height)


def test_iipimage_stops_on_exit(tmp_path: Path) -> None:
    servers.need_iipimage()
    with servers.iipimage(IMAGES[:1], tmp_path) as base:
        assert fetch(f"{base}/{STEMS[0]}/info.json")[0] == 200
    with pytest.raises(urllib.error.URLError):
        fetch(f"{base}/{STEMS[0]}/info.json")


@pytest.mark.parametrize("version", ["2", "3"])
def test_level0_lists_sizes_and_refuses_regions(tmp_path: Path, version: str) -> None:
    path, stem = IMAGES[3], STEMS[3]  # 1600 px tall, wider than 1024
    width, height = image_size(path)
    with servers.level0([path], tmp_path, version=version, sizes=(256, 512, 4096)) as base:
        info = json.loads(fetch(f"{base}/{stem}/info.json")[2])
        expected = "level0" if version == "3" else [servers.LEVEL0_PROFILE_V2]
        assert info["profile"] == expected
        assert "tiles" not in info
        sizes = [(s["width"], s["height"]) for s in info["sizes"]]
        assert [w for w, _ in sizes] == [256, 512, width]  # 4096 > width is left out
        for w, h in sizes:
            assert jpeg_size(fetch(f"{base}/{stem}/full/{w},{h}/0/default.jpg")[2]) == (w, h)
            assert jpeg_size(fetch(f"{base}/{stem}/full/{w},/0/default.jpg")[2]) == (w, h)
        assert jpeg_size(fetch(f"{base}/{stem}/full/max/0/default.jpg")[2]) == (width, height)
        for refused in ("0,0,100,100/full", "full/300,", "full/!256,256", "full/pct:50"):
            assert fetch(f"{base}/{stem}/{refused}/0/default.jpg")[0] == 404, refused
        assert fetch(f"{base}/{stem}/")[0] == 404  # no directory listing


@pytest.mark.parametrize("version, context", [
    ("1.1", servers.CONTEXT_IMAGE["1.1"]), ("2", servers.CONTEXT_IMAGE["2"]),
    ("3", servers.CONTEXT_IMAGE["3"])])
def test_reference_server_speaks_each_version(tmp_path: Path, version: str, context: str) -> None:
    pytest.importorskip("iiif", reason="the reference server needs: pip install iiif==1.0.10")
    quality = "native" if version == "1.1" else "default"
    with servers.reference(IMAGES[:1], tmp_path, version) as base:
        info = json.loads(fetch(f"{base}/{STEMS[0]}/info.json")[2])
        assert info["@context"] == context
        assert info.get("@id", info.get("id")) == f"{base}/{STEMS[0]}"
        assert info.get("type") == ("ImageService3" if version == "3" else None)
        region = fetch(f"{base}/{STEMS[0]}/10,20,300,400/150,/0/{quality}.jpg")
        assert region[0] == 200 and jpeg_size(region[2]) == (150, 200)


def test_flaky_fails_in_turn_and_passes_the_rest(iip_base: str) -> None:
    url = f"/{STEMS[0]}/info.json"
    with servers.flaky(iip_base, every=3, dead=(STEMS[1],)) as (base, stats):
        answers = []
        for _ in range(12):
            try:
                answers.append(fetch(base + url))
            except (http.client.RemoteDisconnected, urllib.error.URLError):
                answers.append((None, {}, b""))
        statuses = [status for status, _, _ in answers]
        assert statuses == [200, 200, 429, 200, 200, 503, 200, 200, None, 200, 200, 429]
        assert answers[2][1]["Retry-After"] == "1"
        assert json.loads(answers[0][2])["@id"] == f"{base}/{STEMS[0]}"  # stays behind proxy
        assert fetch(f"{base}/{STEMS[1]}/full/max/0/default.jpg")[0] == 503
        assert fetch(f"{base}/no_such_page/info.json")[0] == 404  # upstream's answer, passed
        assert stats == {"requests": 14, "passed": 9, "429": 2, "503": 1, "dropped": 1,
                         "dead": 1, "info": 13}


def check_v2(doc: dict, base: str) -> list[tuple[str, str, int, int]]:
    """Structural checks of a Presentation 2.1 manifest; (service id, image url, w, h)."""
    assert doc["@context"] == servers.CONTEXT_PRESENTATION["2"] and doc["@type"] == "sc:Manifest"
    assert doc["label"] and doc["attribution"] and doc["license"] and doc["navDate"]
    assert doc["metadata"][0]["label"] == "Date"
    found = []
    for canvas in doc["sequences"][0]["canvases"]:
        assert canvas["@type"] == "sc:Canvas" and canvas["label"]
        annotation = canvas["images"][0]
        assert annotation["motivation"] == "sc:painting" and annotation["on"] == canvas["@id"]
        resource = annotation["resource"]
        assert resource["@id"].endswith("/full/full/0/default.jpg")
        found.append((resource["service"]["@id"], resource["@id"],
                      canvas["width"], canvas["height"]))
    return found


def check_v3(doc: dict, base: str) -> list[tuple[str, str, int, int]]:
    """Structural checks of a Presentation 3.0 manifest; (service id, image url, w, h)."""
    assert doc["@context"] == servers.CONTEXT_PRESENTATION["3"] and doc["type"] == "Manifest"
    assert doc["label"]["en"] and doc["rights"] and doc["navDate"]
    assert doc["requiredStatement"]["value"]["en"] and doc["metadata"][0]["value"]
    found = []
    for canvas in doc["items"]:
        assert canvas["type"] == "Canvas" and canvas["label"]["none"]
        page = canvas["items"][0]
        annotation = page["items"][0]
        assert page["type"] == "AnnotationPage" and annotation["type"] == "Annotation"
        assert annotation["motivation"] == "painting" and annotation["target"] == canvas["id"]
        body = annotation["body"]
        assert body["type"] == "Image" and body["id"].endswith("/full/max/0/default.jpg")
        found.append((body["service"][0]["id"], body["id"], canvas["width"], canvas["height"]))
    return found


@pytest.mark.parametrize("version", ["2", "3"])
def test_manifest_for_iipimage_resolves(iip_base: str, version: str) -> None:
    labels = [f"f. {i}r" for i in range(1, len(STEMS) + 1)]
    doc = servers.manifest(iip_base, STEMS, version=version, title="Moreno", labels=labels)
    check = check_v2 if version == "2" else check_v3
    found = check(doc, iip_base)
    assert len(found) == len(IMAGES)
    for (service, image_url, w, h), path, stem in zip(found, IMAGES, STEMS, strict=True):
        assert service == f"{iip_base}/{stem}" and (w, h) == image_size(path)
        assert json.loads(fetch(f"{service}/info.json")[2])["@id"] == service
        assert jpeg_size(fetch(image_url)[2]) == (w, h)
    if version == "3":
        assert doc["items"][0]["items"][0]["items"][0]["body"]["service"][0]["type"] == (
            "ImageService2")
        assert [c["label"]["none"][0] for c in doc["items"]] == labels


def test_manifest_for_level0_embeds_sizes(tmp_path: Path) -> None:
    with servers.level0(IMAGES[:2], tmp_path, version="3") as base:
        doc = servers.manifest(base, STEMS[:2], version="3", level0_sizes=True)
        service = doc["items"][0]["items"][0]["items"][0]["body"]["service"][0]
        assert service["type"] == "ImageService3" and service["profile"] == "level0"
        assert service["sizes"] == json.loads(fetch(f"{service['id']}/info.json")[2])["sizes"]
        for _, image_url, w, h in check_v3(doc, base):
            assert jpeg_size(fetch(image_url)[2]) == (w, h)


def test_serve_json_serves_docs_added_after_start() -> None:
    docs: dict = {"broken.json": b"{not json", "book/manifest.json": {"type": "Manifest"}}
    with servers.serve_json(docs) as base:
        url = f"{base}/book/manifest.json"
        docs["collection.json"] = servers.collection(f"{base}/collection.json", [(url, "Book")])
        status, headers, body = fetch(f"{base}/collection.json")
        assert status == 200 and headers["Content-Type"] == "application/json"
        assert json.loads(body)["items"][0]["id"] == url
        assert json.loads(fetch(url)[2]) == {"type": "Manifest"}
        assert fetch(f"{base}/broken.json")[2] == b"{not json"
        assert fetch(f"{base}/missing.json")[0] == 404
