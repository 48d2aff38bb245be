"""A book through IIIF: the same dataset as its PDF, its own metadata, nothing lost.

Every server here is real and local (``tests.iiif_servers``): IIPImage behind lighttpd
(Image API 2.1, level 1), a static level-0 layout, and a proxy that answers 429 and 503
and drops connections. Nothing in the HTTP layer is mocked.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pymupdf
import pytest
from PIL import Image

from archive.apply import apply
from archive.errors import ArchiveError
from archive.iiif import book
from archive.pipeline import build_dataset
from tests import iiif_servers as servers

ROOT = Path(__file__).resolve().parents[1]
EARLY = Path(__file__).resolve().parents[2] / "shared" / "data" / "figures" / "early" / "images"
PAGES = sorted(EARLY.glob("*.jpg"))[:40]  # 14 kept pictures among them, text pages too


@pytest.fixture
def iip():
    """IIPImage is there (or the test skips; in CI, where it is installed, fails)."""
    servers.need_iipimage()


@pytest.fixture(autouse=True)
def _local_servers(monkeypatch):
    """The servers are on 127.0.0.1, which a public Space refuses."""
    monkeypatch.setenv("BORDE_ALLOW_PRIVATE_URLS", "1")


def _pdf(images: list[Path], out: Path) -> Path:
    """The same scans as a PDF, each JPEG embedded as is (at 150 dpi)."""
    doc = pymupdf.open()
    for p in images:
        w, h = Image.open(p).size
        page = doc.new_page(width=w * 72 / 150, height=h * 72 / 150)
        page.insert_image(page.rect, stream=p.read_bytes())
    doc.save(out)
    doc.close()
    return out


def _kept(zip_path: Path) -> list[tuple[int, tuple[float, ...]]]:
    with zipfile.ZipFile(zip_path) as zf:
        rows = csv.DictReader(io.StringIO(zf.read("regions.csv").decode()))
        return [(int(r["page"]), tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1")))
                for r in rows if r["kept"] == "1"]


def _iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0


def _matched(pdf: list, iiif: list, at: float = 0.9) -> int:
    return sum(any(p == q and _iou(a, b) >= at for q, b in iiif) for p, a in pdf)


def _manifest_url(docs_base: str) -> str:
    return f"{docs_base}/book/manifest.json"


def _rows(zip_path: Path, name: str) -> list[dict]:
    with zipfile.ZipFile(zip_path) as zf:
        text = zf.read(name).decode()
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines()]
    return list(csv.DictReader(io.StringIO(text)))


def test_level0_gives_the_pdfs_crops(tmp_path):
    """A static level-0 layout (sizes only, no regions): the same pictures as the PDF of
    the same scans, at the same places."""
    pdf_zip = tmp_path / "pdf.zip"
    build_dataset([_pdf(PAGES, tmp_path / "book.pdf")], pdf_zip)
    with servers.level0(PAGES, tmp_path / "l0", version="3") as base:
        manifest = servers.manifest(base, [p.stem for p in PAGES], version="3",
                                    level0_sizes=True)
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            build_dataset([_manifest_url(docs)], tmp_path / "iiif.zip")
    pdf, iiif = _kept(pdf_zip), _kept(tmp_path / "iiif.zip")
    assert len(pdf) >= 10
    assert len(iiif) == len(pdf)
    assert _matched(pdf, iiif) == len(pdf)

    # the curator's choice keeps where each crop came from
    first = _rows(tmp_path / "iiif.zip", "metadata.jsonl")[0]
    key = (first["source"], first["page"], int(first["file_name"].rsplit("_f", 1)[1][:-4]))
    curated = tmp_path / "curated.zip"
    apply(tmp_path / "iiif.zip", {key: "drop"}, curated)
    rows = _rows(curated, "metadata.jsonl")
    assert len(rows) == len(iiif) - 1 and first["file_name"] not in {r["file_name"] for r in rows}
    assert all(r["origin"]["manifest"] == manifest["id"] and r["origin"]["image"] for r in rows)


def test_iipimage_regions_give_the_pdfs_crops(tmp_path, iip):
    """IIPImage resamples its previews itself (bilinear, from a pyramid level): measured,
    12 of the PDF's 14 pictures at IoU >= 0.9 and the same count; the rest overlap."""
    pdf_zip = tmp_path / "pdf.zip"
    build_dataset([_pdf(PAGES, tmp_path / "book.pdf")], pdf_zip)
    with servers.iipimage(PAGES, tmp_path / "iip") as base:
        manifest = servers.manifest(base, [p.stem for p in PAGES], version="2")
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            build_dataset([_manifest_url(docs)], tmp_path / "iiif.zip", workers=2)
    pdf, iiif = _kept(pdf_zip), _kept(tmp_path / "iiif.zip")
    assert abs(len(iiif) - len(pdf)) <= 1
    assert _matched(pdf, iiif) >= 0.8 * len(pdf)
    assert _matched(pdf, iiif, at=0.4) >= len(pdf) - 1
    for row in _rows(tmp_path / "iiif.zip", "metadata.jsonl"):  # only the picture's pixels
        image = row["origin"]["image"]
        region = image.split("/")[-4]
        assert region != "full" and len(region.split(",")) == 4, image


def test_the_books_metadata_reaches_each_row_caption_and_card(tmp_path, iip):
    pages = PAGES[24:34]
    with servers.iipimage(pages, tmp_path / "iip") as base:
        labels = [f"fol. {k}r" for k in range(1, len(pages) + 1)]
        manifest = servers.manifest(base, [p.stem for p in pages], version="3",
                                    title="Les Heures de test", labels=labels,
                                    license="https://creativecommons.org/publicdomain/mark/1.0/")
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            out = tmp_path / "out.zip"
            report = build_dataset([_manifest_url(docs)], out,
                                   caption="{title}, {date}, {label}")
    assert report.items >= 1
    rows = _rows(out, "metadata.jsonl")
    for row in rows:
        origin = row["origin"]
        assert origin["title"] == "Les Heures de test"
        assert origin["date"] == "1891"
        assert origin["label"] == labels[row["page"] - 1]
        assert origin["rights"] == "https://creativecommons.org/publicdomain/mark/1.0/"
        assert origin["manifest"] == manifest["id"]
        assert origin["canvas"].startswith(manifest["id"])
        assert origin["image"].startswith(base)
        assert row["text"] == f"Les Heures de test, 1891, {origin['label']}"
    with zipfile.ZipFile(out) as zf:
        card = zf.read("README.md").decode()
    assert "### Les Heures de test" in card
    assert "publicdomain/mark/1.0" in card
    assert f"{len(rows)} illustrations from 1 book(s)" in card


def test_a_flaky_server_loses_no_page_and_resume_fetches_only_what_failed(tmp_path, iip):
    """429 with Retry-After, 503 and dropped connections are retried; two canvases whose
    images always fail are listed with their reason, the build goes on, and --resume
    fetches those two again, once the server gives them."""
    pages = PAGES[:12]
    dead = (pages[3].stem, pages[7].stem)
    out = tmp_path / "out.zip"
    with servers.iipimage(pages, tmp_path / "iip") as base:
        manifest = servers.manifest(base, [p.stem for p in pages], version="2")
        with servers.flaky(base, every=4, dead=dead) as (proxy, stats):
            behind = json.loads(json.dumps(manifest).replace(base, proxy))
            with servers.serve_json({"book/manifest.json": behind}) as docs:
                build_dataset([_manifest_url(docs)], out)
        assert stats["429"] and stats["503"] and stats["dropped"] and stats["dead"]
        failed = {int(r["page"]): r["reason"] for r in _rows(out, "manifest.csv")
                  if r["reason"].startswith("image not fetched")}
        assert sorted(failed) == [4, 8]
        assert len(_rows(out, "manifest.csv")) == 12
        kept_before = _rows(out, "metadata.jsonl")
        os.replace(out, out.with_name(out.name + ".partial"))  # as a killed build leaves it

        with servers.flaky(base, every=10**9) as (proxy, stats):
            behind = json.loads(json.dumps(manifest).replace(base, proxy))
            with servers.serve_json({"book/manifest.json": behind}) as docs:
                build_dataset([_manifest_url(docs)], out, resume=True)
    pages_done = _rows(out, "manifest.csv")
    assert sorted(int(r["page"]) for r in pages_done) == list(range(1, 13))
    assert not any(r["reason"].startswith("image not fetched") for r in pages_done)
    assert {r["file_name"] for r in kept_before} <= {
        r["file_name"] for r in _rows(out, "metadata.jsonl")}
    # only the two missing pages were fetched again: each its info.json at most, its
    # preview, and its crops
    assert 2 <= stats["passed"] <= 2 * 5


def test_a_killed_build_resumes_to_the_same_dataset(tmp_path, iip):
    pages = PAGES[:24]
    with servers.iipimage(pages, tmp_path / "iip") as base:
        manifest = servers.manifest(base, [p.stem for p in pages], version="2")
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            url = _manifest_url(docs)
            whole = tmp_path / "whole.zip"
            build_dataset([url], whole)
            out = tmp_path / "out.zip"
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            cmd = [sys.executable, "-m", "archive", url, "-o", str(out)]
            proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stderr=subprocess.PIPE,
                                    start_new_session=True)
            partial = out.with_name(out.name + ".partial")
            deadline = time.time() + 60
            while time.time() < deadline and (not partial.exists()
                                              or partial.stat().st_size < 200_000):
                time.sleep(0.05)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            assert partial.exists() and not out.exists()
            done = subprocess.run([*cmd, "--resume"], env=env, cwd=ROOT, capture_output=True,
                                  text=True, timeout=120)
            assert done.returncode == 0, done.stderr
    assert ([r["page"] for r in _rows(out, "manifest.csv")]
            == [r["page"] for r in _rows(whole, "manifest.csv")])
    with zipfile.ZipFile(out) as a, zipfile.ZipFile(whole) as b:
        images = sorted(n for n in b.namelist() if n.startswith("images/"))
        assert sorted(n for n in a.namelist() if n.startswith("images/")) == images
        assert all(a.read(n) == b.read(n) for n in images)


@pytest.mark.parametrize("version", ["1.1", "3"])
def test_image_api_1_1_and_3_regions(tmp_path, version):
    """zimeon's reference server speaks Image API 1.1 and 3 (level 1): previews and the
    pictures' regions come from it, in each version's own syntax."""
    pytest.importorskip("iiif", reason="the reference server needs: pip install iiif==1.0.10")
    pages = PAGES[24:30]
    with servers.reference(pages, tmp_path / "ref", version) as base:
        manifest = servers.manifest(base, [p.stem for p in pages], version="3")
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            out = tmp_path / "out.zip"
            report = build_dataset([_manifest_url(docs)], out)
    assert report.pages == 6 and report.items >= 1
    quality = "native.jpg" if version == "1.1" else "default.jpg"
    for row in _rows(out, "metadata.jsonl"):
        image = row["origin"]["image"]
        assert image.endswith("/0/" + quality) and len(image.split("/")[-4].split(",")) == 4


def test_a_collection_is_each_of_its_books(tmp_path):
    books = {"a": PAGES[24:27], "b": PAGES[27:30]}
    with servers.level0([p for ps in books.values() for p in ps], tmp_path / "l0") as base:
        docs_map: dict = {}
        with servers.serve_json(docs_map) as docs:
            for name, pages in books.items():
                docs_map[f"{name}/manifest.json"] = servers.manifest(
                    base, [p.stem for p in pages], title=f"Book {name}", level0_sizes=True,
                    manifest_id=f"{docs}/{name}/manifest.json")
            docs_map["collection.json"] = servers.collection(
                f"{docs}/collection.json",
                [(f"{docs}/{name}/manifest.json", f"Book {name}") for name in books])
            out = tmp_path / "out.zip"
            build_dataset([f"{docs}/collection.json"], out)
    pages = _rows(out, "manifest.csv")
    assert [(r["source"], r["page"]) for r in pages] == [
        (s, str(k)) for s in ("a", "b") for k in (1, 2, 3)]
    titles = {r["source"]: r["origin"]["title"] for r in _rows(out, "metadata.jsonl")}
    assert set(titles.values()) <= {"Book a", "Book b"} and titles


def test_the_cli_refuses_a_private_address_in_one_sentence(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "BORDE_ALLOW_PRIVATE_URLS"}
    env["PYTHONPATH"] = str(ROOT)
    for url, words in (("http://127.0.0.1:9/book/manifest.json", "private or local network"),
                       ("http://169.254.169.254/latest/meta-data/", "private or local network"),
                       ("ftp://example.org/manifest.json", "http")):
        done = subprocess.run([sys.executable, "-m", "archive", url, "-o",
                               str(tmp_path / "out.zip")], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2
        line = done.stderr.strip().splitlines()[-1]
        assert line.startswith("error: ") and words in line and "Traceback" not in done.stderr
        assert not (tmp_path / "out.zip").exists()


def test_a_web_collection_never_reads_the_servers_own_files(tmp_path):
    """A member named by a path is resolved against the collection's address: fetched from
    the web (here: not found), never opened on the server that runs the build."""
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"not": "read"}))

    collection = {"@context": "http://iiif.io/api/presentation/3/context.json",
                  "id": "c", "type": "Collection", "label": {"en": ["c"]},
                  "items": [{"id": str(secret), "type": "Manifest"}]}
    with servers.serve_json({"c.json": collection}) as docs, \
            pytest.raises(ArchiveError) as refused:
        book.manifests(f"{docs}/c.json")
    assert refused.value.code == "url_status" and refused.value.fields["status"] == 404


def test_a_canvas_without_an_image_service_is_read_from_its_image(tmp_path):
    """No service: the image URL as is, fetched once a page, and the same crops."""
    pages = PAGES[24:30]
    with servers.level0(pages, tmp_path / "l0", version="3") as base:
        manifest = servers.manifest(base, [p.stem for p in pages], version="3",
                                    level0_sizes=True)
        with servers.serve_json({"book/manifest.json": manifest}) as docs:
            build_dataset([_manifest_url(docs)], tmp_path / "with.zip")
        plain = json.loads(json.dumps(manifest))
        for canvas in plain["items"]:
            for annotation in canvas["items"][0]["items"]:
                annotation["body"].pop("service", None)
        with servers.serve_json({"book/manifest.json": plain}) as docs:
            build_dataset([_manifest_url(docs)], tmp_path / "without.zip")
    with_service, without = _kept(tmp_path / "with.zip"), _kept(tmp_path / "without.zip")
    assert with_service and _matched(with_service, without) == len(with_service)
    images = {r["origin"]["image"] for r in _rows(tmp_path / "without.zip", "metadata.jsonl")}
    assert images and all(u.endswith("/full/max/0/default.jpg") for u in images), images


class _CountingDocs(dict):
    """The JSON server's documents, counting each time one is asked for."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked: dict[str, int] = {}

    def get(self, key, default=None):
        self.asked[key] = self.asked.get(key, 0) + 1
        return super().get(key, default)


def test_a_build_fetches_its_manifest_once_and_info_json_only_for_picture_pages(tmp_path):
    """At 2 workers the manifest is fetched once (the forked workers open the book the
    build read), and a manifest that gives each image's size and a stated level-1 service
    (as Gallica, the Bodleian, Yale ... publish them) has its info.json asked for only on
    the pages whose pictures are cut as regions, not on each page. A second build fetches
    the manifest again: nothing is kept between builds."""
    pages = PAGES[:12]
    out = tmp_path / "out.zip"
    with servers.iipimage(pages, tmp_path / "iip") as base:
        manifest = servers.manifest(base, [p.stem for p in pages], version="2")
        with servers.flaky(base, every=10**9) as (proxy, stats):
            behind = json.loads(json.dumps(manifest).replace(base, proxy))
            docs = _CountingDocs({"book/manifest.json": behind})
            with servers.serve_json(docs) as address:
                url = f"{address}/book/manifest.json"
                report = build_dataset([url], out, workers=2)
                assert docs.asked == {"book/manifest.json": 1}
                info_asked = stats["info"]
                build_dataset([url], tmp_path / "again.zip", workers=2)
                assert docs.asked == {"book/manifest.json": 2}
    picture_pages = {int(r["page"]) for r in _rows(out, "metadata.jsonl")}
    assert report.pages == 12 and picture_pages
    assert len(picture_pages) <= info_asked < 12


def test_a_worker_fetches_its_next_page_while_it_reads_this_one(tmp_path):
    """Told the pages it reads next (a chunk), a IIIF book fetches the next page's preview
    in the background while the current one is worked on: reading it then asks the
    server nothing more, and gives the same page as a plain read."""
    pages = PAGES[:3]
    with servers.iipimage(pages, tmp_path / "iip") as base:
        manifest = servers.manifest(base, [p.stem for p in pages], version="2")
        with servers.flaky(base, every=10**9) as (proxy, stats):
            behind = json.loads(json.dumps(manifest).replace(base, proxy))
            with servers.serve_json({"book/manifest.json": behind}) as address:
                url = f"{address}/book/manifest.json"
                ahead = book.IIIFBook(url)
                ahead.ahead([0, 1], 400)
                first = ahead.read_page(0, 400)
                deadline = time.time() + 10
                while stats["requests"] < 2 and time.time() < deadline:
                    time.sleep(0.02)  # page 2's preview on its way, unasked
                asked = stats["requests"]
                second = ahead.read_page(1, 400)
                assert asked == 2 and stats["requests"] == 2  # nothing asked twice
                plain = book.IIIFBook(url).read_page(1, 400)
                ahead.close()
    assert first.index == 0 and second.index == 1
    assert np.array_equal(np.asarray(second.preview), np.asarray(plain.preview))
