"""Real IIIF servers on 127.0.0.1 for the tests of issue #64, and manifests written for them.

Nothing here mocks HTTP: each context manager starts a real server on a free port and yields
its base URL, so that f"{base}/{stem}" is the IIIF Image service id of each image:

- `iipimage`: IIPImage (Debian's iipimage-server) behind lighttpd's mod_fastcgi, Image API 2.1
  level 1 (regions `x,y,w,h` and `pct:`, sizes `w,`, `,h`, `w,h`, `!w,h`, `full`, `max`).
- `level0`: a static level-0 layout (Image API 2 or 3): only the listed sizes exist; any
  region or other size is a 404, as on a library's static tile dump.
- `reference`: zimeon's IIIF Image API reference implementation (PyPI `iiif`), API 1.1/2.1/3.0.
- `flaky`: a proxy that answers some requests 429 or 503 and drops some connections.
- `serve_json`: JSON documents (manifests, collections, broken files) at URLs.

`manifest` and `collection` write Presentation 2.1 / 3.0 documents for those servers; they read
each image's info.json from the running server, so widths and heights are the server's own.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from PIL import Image

HOST = "127.0.0.1"
# Paths and tools of Debian bookworm's packages (`dpkg -L iipimage-server`).
IIPSRV = Path("/usr/lib/iipimage-server/iipsrv.fcgi")
LIGHTTPD = "lighttpd"
VIPS = "vips"
APT_COMMAND = (
    "apt-get install -y --no-install-recommends iipimage-server lighttpd libvips-tools"
)
# IIPImage reads tiled multi-resolution TIFFs; 256 px JPEG tiles is its documented layout.
TILE_PX = 256
JPEG_QUALITY = 90  # high enough that crops compare with the PDF path within rounding
# iipsrv refuses outputs larger than MAX_CVT px (default 5000); the test pages are 1600 px.
MAX_CVT_PX = 20000
# Two FastCGI processes, so the default of 2 requests in flight per host runs in parallel.
IIPSRV_PROCS = 2
START_TIMEOUT_S = 10.0  # iipimage starts in ~0.2 s here; slack for a loaded CI machine
STOP_TIMEOUT_S = 5.0
HANDLER_IDLE_S = 30  # keep-alive connections idle longer than this are closed

CONTEXT_IMAGE = {
    "1.1": "http://library.stanford.edu/iiif/image-api/1.1/context.json",
    "2": "http://iiif.io/api/image/2/context.json",
    "3": "http://iiif.io/api/image/3/context.json",
}
CONTEXT_PRESENTATION = {
    "2": "http://iiif.io/api/presentation/2/context.json",
    "3": "http://iiif.io/api/presentation/3/context.json",
}
LEVEL0_PROFILE_V2 = "http://iiif.io/api/image/2/level0.json"
FLAKY_KINDS = ("429", "503", "dropped")  # the order in which `flaky` fails requests
RETRY_AFTER_S = 1  # what `flaky` sends with each 429

# Defaults of `manifest`: a public-domain book as a library would describe it.
DEFAULT_DATE = "1891"
DEFAULT_NAV_DATE = "1891-01-01T00:00:00Z"
DEFAULT_ATTRIBUTION = "Test library, 127.0.0.1"
DEFAULT_LICENSE = "http://creativecommons.org/publicdomain/mark/1.0/"


def missing_tools() -> list[str]:
    """What `iipimage` needs and this machine lacks, so tests can skip with APT_COMMAND."""
    missing = [tool for tool in (LIGHTTPD, VIPS) if shutil.which(tool) is None]
    return missing + ([] if IIPSRV.exists() else [str(IIPSRV)])


def need_iipimage() -> None:
    """Skip a test where IIPImage is missing; fail it where CI requires the server
    (``BORDE_REQUIRE_IIIF_SERVER=1``, set by .ci/run, which installs it)."""
    missing = missing_tools()
    if not missing:
        return
    reason = f"IIPImage test server needs {missing}: {APT_COMMAND}"
    if os.environ.get("BORDE_REQUIRE_IIIF_SERVER") == "1":
        pytest.fail(f"IIIF server required (BORDE_REQUIRE_IIIF_SERVER=1) but {reason}")
    pytest.skip(reason)


# ---------------------------------------------------------------- shared plumbing


def _stems(images: list[Path]) -> list[str]:
    """The image identifiers; two images with one stem would share a URL."""
    stems = [Path(p).stem for p in images]
    if len(set(stems)) != len(stems):
        raise ValueError(f"images must have distinct stems: {stems}")
    return stems


def _free_port() -> int:
    """A port free now, for servers (lighttpd) that cannot bind port 0 themselves."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _no_proxy_open(url: str, timeout: float = 5.0):
    """urlopen that ignores http_proxy: the servers here are on 127.0.0.1."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return opener.open(url, timeout=timeout)


def get_json(url: str) -> dict:
    """GET a JSON document from a local server (for tests and `manifest`)."""
    with _no_proxy_open(url) as response:
        return json.loads(response.read())


class _Quiet:
    """Mixin: no request log on stderr, HTTP/1.1 keep-alive like real image servers."""

    protocol_version = "HTTP/1.1"
    timeout = HANDLER_IDLE_S

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (stdlib name)
        pass


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler] | partial) -> Iterator[ThreadingHTTPServer]:
    """Run a ThreadingHTTPServer on a free 127.0.0.1 port in a daemon thread."""
    server = ThreadingHTTPServer((HOST, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(STOP_TIMEOUT_S)


def _base(server: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_address[1]}"


# ---------------------------------------------------------------- IIPImage + lighttpd


def pyramid_tiff(src: Path, dst: Path) -> Path:
    """Write src as the tiled, multi-resolution JPEG TIFF that IIPImage serves."""
    subprocess.run(
        [VIPS, "tiffsave", str(src), str(dst), "--tile", "--pyramid",
         "--compression", "jpeg", f"--Q={JPEG_QUALITY}",
         f"--tile-width={TILE_PX}", f"--tile-height={TILE_PX}"],
        check=True, capture_output=True,
    )
    return dst


def _lighttpd_conf(root: Path, socket_path: Path, port: int) -> str:
    """lighttpd config: /<stem>/... rewritten to iipsrv's ?IIIF=<stem>.tif/..."""
    env = {
        "FILESYSTEM_PREFIX": f"{root}/",
        "LOGFILE": str(root / "iipsrv.log"),
        "VERBOSITY": "1",
        "MAX_CVT": str(MAX_CVT_PX),
        "JPEG_QUALITY": str(JPEG_QUALITY),
        "MEMCACHED_SERVERS": "",  # no shared cache between tests' workdirs
        "OMP_NUM_THREADS": "1",
    }
    env_lines = ",\n".join(f'      "{k}" => "{v}"' for k, v in env.items())
    return f"""\
server.document-root = "{root}"
server.bind = "{HOST}"
server.port = {port}
server.modules = ("mod_rewrite", "mod_fastcgi")
server.errorlog = "{root / 'lighttpd.log'}"
url.rewrite-once = ("^/([^/?]+)(/[^?]*)?$" => "/fcgi-bin/iipsrv.fcgi?IIIF=$1.tif$2")
fastcgi.server = ("/fcgi-bin/iipsrv.fcgi" => ((
    "socket" => "{socket_path}",
    "check-local" => "disable",
    "min-procs" => {IIPSRV_PROCS}, "max-procs" => {IIPSRV_PROCS},
    "bin-path" => "{IIPSRV}",
    "bin-environment" => (
{env_lines}
    )
)))
"""


def _wait_ready(process: subprocess.Popen, url: str, log: Path) -> bool:
    """True once url answers 200; False if the server died (e.g. its port was taken)."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with _no_proxy_open(url, timeout=1.0) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    log_text = log.read_text(errors="replace") if log.exists() else ""
    raise RuntimeError(f"iipimage did not answer {url} in {START_TIMEOUT_S}s:\n{log_text}")


def _stop(process: subprocess.Popen) -> None:
    """Stop lighttpd and the iipsrv processes it spawned (one process group)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def iipimage(images: list[Path], workdir: Path) -> Iterator[str]:
    """IIPImage (Debian's iipimage-server, iipsrv.fcgi 1.1) behind lighttpd's mod_fastcgi.

    Each image becomes a tiled pyramid TIFF in workdir/iipimage. Yields the base URL such that
    f"{base}/{stem}" is each image's Image API 2.1 level-1 service id (its info.json works).
    Raises RuntimeError if it does not start; see `missing_tools` and APT_COMMAND.
    """
    stems = _stems(images)
    root = Path(workdir, "iipimage").resolve()
    root.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda im, s: pyramid_tiff(im, root / f"{s}.tif"), images, stems))
    # A short directory: unix socket paths are limited to 108 bytes, pytest's tmp_path is long.
    sock_dir = Path(tempfile.mkdtemp(prefix="iip-"))
    try:
        yield from _run_lighttpd(root, sock_dir / "iipsrv.sock", stems[0])
    finally:
        shutil.rmtree(sock_dir, ignore_errors=True)


def _run_lighttpd(root: Path, socket_path: Path, probe_stem: str) -> Iterator[str]:
    """Start lighttpd on a free port (retrying if another process took it), yield its base."""
    for _attempt in range(3):
        port = _free_port()
        conf = root / "lighttpd.conf"
        conf.write_text(_lighttpd_conf(root, socket_path, port))
        process = subprocess.Popen(
            [LIGHTTPD, "-D", "-f", str(conf)], start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        base = f"http://{HOST}:{port}"
        try:
            if _wait_ready(process, f"{base}/{probe_stem}/info.json", root / "lighttpd.log"):
                yield base
                return
        finally:
            _stop(process)
    raise RuntimeError(f"lighttpd would not start; see {root / 'lighttpd.log'}")


# ---------------------------------------------------------------- static level 0


def _level0_info(service_id: str, version: str, width: int, height: int,
                 sizes: list[tuple[int, int]]) -> dict:
    """info.json of a level-0 service: no tiles, only `sizes`."""
    listed = [{"width": w, "height": h} for w, h in sizes]
    if version == "3":
        return {"@context": CONTEXT_IMAGE["3"], "id": service_id, "type": "ImageService3",
                "protocol": "http://iiif.io/api/image", "profile": "level0",
                "width": width, "height": height, "sizes": listed}
    return {"@context": CONTEXT_IMAGE["2"], "@id": service_id,
            "protocol": "http://iiif.io/api/image", "profile": [LEVEL0_PROFILE_V2],
            "width": width, "height": height, "sizes": listed}


def _level0_image(src: Path, folder: Path, service_id: str, version: str,
                  widths: tuple[int, ...]) -> None:
    """Write one image's static layout: info.json and full/<size>/0/default.jpg per size."""
    with Image.open(src) as image:
        image = image.convert("RGB")
        width, height = image.size
        sizes = [(w, round(w * height / width)) for w in sorted(set(widths)) if w < width]
        sizes.append((width, height))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "info.json").write_text(
            json.dumps(_level0_info(service_id, version, width, height, sizes)))
        for w, h in sizes:
            # Clients write a listed size as "w,h" (API 3's canonical form) or "w," (API 2's);
            # the full size also as "max" (2.1 and 3) and "full" (2).
            names = [f"{w},{h}", f"{w},"] + (["max", "full"] if w == width else [])
            data = _jpeg_bytes(image if w == width else image.resize((w, h), Image.LANCZOS))
            for name in names:
                path = folder / "full" / name / "0" / "default.jpg"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)


def _jpeg_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


class _StaticHandler(_Quiet, SimpleHTTPRequestHandler):
    """Files only: a directory is a 404 (no listings), as on a static IIIF host."""

    def list_directory(self, path: str):  # type: ignore[override]
        self.send_error(404, "Not Found")
        return None


@contextmanager
def level0(images: list[Path], workdir: Path, version: str = "3",
           sizes: tuple[int, ...] = (256, 512, 1024)) -> Iterator[str]:
    """A static level-0 Image API layout (version "2" or "3") served by a ThreadingHTTPServer.

    info.json lists only `sizes` at widths below the image's, plus its full size; each listed
    size exists as full/<w>,<h>/0/default.jpg and full/<w>,/0/default.jpg (full size also as
    full/max and full/full). Anything else (a region, another size) is a 404.
    Yields the base such that f"{base}/{stem}" is each image's service id.
    """
    if version not in ("2", "3"):
        raise ValueError(f"level0 serves Image API 2 or 3, not {version!r}")
    stems = _stems(images)
    root = Path(workdir, f"level0-v{version}").resolve()
    with _serving(partial(_StaticHandler, directory=str(root))) as server:
        base = _base(server)
        for image, stem in zip(images, stems, strict=True):
            _level0_image(Path(image), root / stem, f"{base}/{stem}", version, sizes)
        yield base


# ---------------------------------------------------------------- reference implementation


REFERENCE_VERSIONS = {"1.1": "1.1", "2": "2.1", "2.1": "2.1", "3": "3.0", "3.0": "3.0"}


@contextmanager
def reference(images: list[Path], workdir: Path, version: str) -> Iterator[str]:
    """zimeon's IIIF Image API reference server (PyPI `iiif`, level 1) for version 1.1, 2 or 3.

    The images are copied to workdir/reference. Yields the base such that f"{base}/{stem}" is
    each image's service id. Its 3.0 info.json lacks `type`; we add "ImageService3", as the
    spec requires, so the server is a faithful Image API 3 service.
    """
    from flask import Flask  # PyPI iiif's server is a Flask app
    from iiif.flask_utils import add_handler
    from werkzeug.serving import WSGIRequestHandler, make_server

    api = REFERENCE_VERSIONS[version]
    stems = _stems(images)
    root = Path(workdir, "reference").resolve()
    root.mkdir(parents=True, exist_ok=True)
    for image, stem in zip(images, stems, strict=True):
        shutil.copyfile(image, root / f"{stem}{Path(image).suffix.lower()}")
    app = Flask("iiif_reference")
    app.after_request(_add_v3_type)
    quiet = type("QuietWSGIHandler", (WSGIRequestHandler,), {"log_request": _Quiet.log_message})
    server = make_server(HOST, 0, app, threaded=True, request_handler=quiet)
    add_handler(app, _reference_config(root, server.server_port, api))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_port}/{api}"
    finally:
        server.shutdown()
        thread.join(STOP_TIMEOUT_S)


def _reference_config(root: Path, port: int, api: str):
    """The settings iiif.flask_utils reads (its command line would set them)."""
    from iiif.flask_utils import Config

    config = Config()
    config.scheme, config.host, config.port = "http", HOST, port
    config.prefix = config.client_prefix = api
    config.klass_name, config.api_version, config.auth_type = "pil", api, "none"
    config.image_dir, config.generator_dir = str(root), str(root)
    config.tile_width = config.tile_height = TILE_PX * 2
    config.scale_factors = ["auto"]
    config.include_osd = False
    config.gauth_client_secret_file = ""
    config.access_cookie_lifetime, config.access_token_lifetime = 3600, 10
    return config


def _add_v3_type(response):
    """Flask after_request: give a 3.0 info.json the `type` the reference server leaves out."""
    if response.mimetype.endswith("json") and response.status_code == 200:
        info = json.loads(response.get_data())
        if info.get("@context") == CONTEXT_IMAGE["3"] and "type" not in info:
            info["type"] = "ImageService3"
            response.set_data(json.dumps(info))
    return response


# ---------------------------------------------------------------- flaky proxy


class _Plan:
    """Which request fails how: every `every`-th request fails, as 429, 503, dropped in turn;
    a request whose path contains one of `dead` always gets 503 (a canvas that never loads)."""

    def __init__(self, every: int, dead: tuple[str, ...]) -> None:
        if every < 1:
            raise ValueError("every must be >= 1")
        self.every, self.dead, self.count = every, dead, 0
        self.lock = threading.Lock()
        self.stats = {"requests": 0, "passed": 0, "dead": 0, "info": 0} | {
            k: 0 for k in FLAKY_KINDS}

    def next(self, path: str) -> str:
        with self.lock:
            self.stats["requests"] += 1
            self.stats["info"] += path.split("?")[0].endswith("/info.json")
            if any(part in path for part in self.dead):
                kind = "dead"
            else:
                self.count += 1
                turn, failing = divmod(self.count, self.every)
                kind = FLAKY_KINDS[(turn - 1) % len(FLAKY_KINDS)] if failing == 0 else "passed"
            self.stats[kind] += 1
            return kind


class _FlakyHandler(_Quiet, BaseHTTPRequestHandler):
    upstream: str
    plan: _Plan

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        kind = self.plan.next(self.path)
        if kind == "dropped":
            self.close_connection = True  # nothing written: the client sees the socket close
        elif kind == "429":
            self._answer(429, b"Too Many Requests\n", "text/plain", {"Retry-After": RETRY_AFTER_S})
        elif kind in ("503", "dead"):
            self._answer(503, b"Service Unavailable\n", "text/plain")
        else:
            self._pass_through()

    def _pass_through(self) -> None:
        """Forward to upstream; JSON bodies name the proxy, so clients stay behind it."""
        try:
            response = _no_proxy_open(self.upstream + self.path, timeout=30)
        except urllib.error.HTTPError as error:
            response = error
        except (urllib.error.URLError, OSError) as error:
            self._answer(502, f"upstream: {error}\n".encode(), "text/plain")
            return
        with response:
            body = response.read()
            ctype = response.headers.get("Content-Type", "application/octet-stream")
            if "json" in ctype:
                base = f"http://{HOST}:{self.server.server_address[1]}"
                body = body.replace(self.upstream.encode(), base.encode())
            self._answer(response.status, body, ctype)

    def _answer(self, status: int, body: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        for name, value in {"Content-Type": ctype, **(headers or {})}.items():
            self.send_header(name, str(value))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def flaky(upstream: str, every: int = 3,
          dead: tuple[str, ...] = ()) -> Iterator[tuple[str, dict]]:
    """A proxy in front of `upstream` (a base URL) that fails requests deterministically.

    Request n (counted from 1, over all paths not in `dead`) fails when n % every == 0, in
    turn as 429 (Retry-After: 1), 503, and a dropped connection (closed with no answer); the
    rest pass through (upstream's ids in JSON rewritten to the proxy's base). A path that
    contains any string of `dead` always gets 503. Yields (base URL, live stats) where stats
    counts "requests", "passed", "429", "503", "dropped", "dead", and "info" (info.json asked).
    """
    plan = _Plan(every, tuple(dead))
    handler = type("FlakyHandler", (_FlakyHandler,),
                   {"upstream": upstream.rstrip("/"), "plan": plan})
    with _serving(handler) as server:
        yield _base(server), plan.stats


# ---------------------------------------------------------------- JSON documents


class _JsonHandler(_Quiet, BaseHTTPRequestHandler):
    docs: dict

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        doc = self.docs.get(self.path.split("?")[0].lstrip("/"))
        if doc is None:
            self.send_error(404, "Not Found")
            return
        if isinstance(doc, (dict, list)):
            doc = json.dumps(doc)
        body = doc.encode() if isinstance(doc, str) else doc
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve_json(docs: dict[str, dict | list | str | bytes]) -> Iterator[str]:
    """Serve docs at f"{base}/{key}" (e.g. {"book/manifest.json": manifest(...)}).

    A dict or list is sent as JSON; str or bytes as is (for broken files). `docs` is read at
    each request, so a doc that must name the base (a collection) can be added after start.
    """
    handler = type("JsonHandler", (_JsonHandler,), {"docs": docs})
    with _serving(handler) as server:
        yield _base(server)


# ---------------------------------------------------------------- Presentation documents


def _service_version(info: dict) -> str:
    """"1.1", "2" or "3" from an info.json's @context."""
    for version, context in CONTEXT_IMAGE.items():
        if info.get("@context") == context:
            return version
    raise ValueError(f"unknown Image API context {info.get('@context')!r}")


def _service_block(info: dict, embed_sizes: bool) -> dict:
    """The image service as a manifest names it (profile as in the info.json)."""
    version = _service_version(info)
    profile = info["profile"]
    if version == "3":
        block = {"id": info["id"], "type": "ImageService3", "profile": profile}
    else:
        profile = profile[0] if isinstance(profile, list) else profile
        block = {"@context": CONTEXT_IMAGE[version], "@id": info["@id"], "profile": profile}
    if embed_sizes and "sizes" in info:
        block["sizes"] = info["sizes"]
    return block


def _image_url(service_id: str, service_version: str, manifest_version: str) -> str:
    """The full image: 1.1 says `native`; Presentation 2 uses size `full`, 3 uses `max`."""
    if service_version == "1.1":
        return f"{service_id}/full/full/0/native.jpg"
    size = "full" if manifest_version == "2" else "max"
    return f"{service_id}/full/{size}/0/default.jpg"


def _canvas_v2(index: int, label: str, info: dict, manifest_id: str, level0_sizes: bool) -> dict:
    block = _service_block(info, level0_sizes)
    service_id = block.get("@id") or block["id"]
    if "type" in block:  # a v3 service named from a v2 manifest
        block = {"@context": CONTEXT_IMAGE["3"], "@id": service_id, "profile": block["profile"]}
    canvas_id = f"{manifest_id}/canvas/p{index}"
    resource = {"@id": _image_url(service_id, _service_version(info), "2"),
                "@type": "dctypes:Image", "format": "image/jpeg",
                "width": info["width"], "height": info["height"], "service": block}
    return {"@id": canvas_id, "@type": "sc:Canvas", "label": label,
            "width": info["width"], "height": info["height"],
            "images": [{"@id": f"{canvas_id}/annotation", "@type": "oa:Annotation",
                        "motivation": "sc:painting", "on": canvas_id, "resource": resource}]}


def _canvas_v3(index: int, label: str, info: dict, manifest_id: str, level0_sizes: bool) -> dict:
    block = _service_block(info, level0_sizes)
    service_id = block.pop("@id", None) or block["id"]
    if "type" not in block:  # an Image API 1.1/2 service in a v3 manifest
        block = {"id": service_id, "type": "ImageService2", "profile": block["profile"]} | (
            {"sizes": block["sizes"]} if "sizes" in block else {})
    canvas_id = f"{manifest_id}/canvas/p{index}"
    body = {"id": _image_url(service_id, _service_version(info), "3"), "type": "Image",
            "format": "image/jpeg", "width": info["width"], "height": info["height"],
            "service": [block]}
    annotation = {"id": f"{canvas_id}/annotation", "type": "Annotation",
                  "motivation": "painting", "target": canvas_id, "body": body}
    page = {"id": f"{canvas_id}/page", "type": "AnnotationPage", "items": [annotation]}
    return {"id": canvas_id, "type": "Canvas", "label": {"none": [label]},
            "width": info["width"], "height": info["height"], "items": [page]}


def manifest(base: str, stems: list[str], version: str = "3", title: str = "A test book",
             level0_sizes: bool = False, labels: list[str] | None = None, *,
             manifest_id: str | None = None, date: str = DEFAULT_DATE,
             attribution: str = DEFAULT_ATTRIBUTION, license: str = DEFAULT_LICENSE) -> dict:  # noqa: A002
    """A Presentation 2.1 (version "2") or 3.0 ("3") manifest of the images served at base.

    Reads f"{base}/{stem}/info.json" from the running server for each canvas's width, height
    and service (ImageService2 for IIPImage, ImageService3 for level0/reference v3). The
    painting image is f"{base}/{stem}/full/full/0/default.jpg" (v2) or .../full/max/0/... (v3)
    (.../full/full/0/native.jpg for an Image API 1.1 service). level0_sizes copies the
    service's `sizes` into the manifest, as some libraries do. labels default to "p. 1", ...
    manifest_id defaults to f"{base}/manifest.json"; pass the URL you serve it at.
    """
    if version not in CONTEXT_PRESENTATION:
        raise ValueError(f"Presentation version must be '2' or '3', not {version!r}")
    labels = labels or [f"p. {i}" for i in range(1, len(stems) + 1)]
    if len(labels) != len(stems):
        raise ValueError("one label per stem")
    manifest_id = manifest_id or f"{base}/manifest.json"
    infos = [get_json(f"{base}/{stem}/info.json") for stem in stems]
    make = _canvas_v2 if version == "2" else _canvas_v3
    canvases = [make(i, label, info, manifest_id, level0_sizes)
                for i, (label, info) in enumerate(zip(labels, infos, strict=True), start=1)]
    if version == "2":
        return {"@context": CONTEXT_PRESENTATION["2"], "@id": manifest_id,
                "@type": "sc:Manifest", "label": title,
                "metadata": [{"label": "Date", "value": date}], "navDate": DEFAULT_NAV_DATE,
                "attribution": attribution, "license": license,
                "sequences": [{"@id": f"{manifest_id}/sequence/normal", "@type": "sc:Sequence",
                               "canvases": canvases}]}
    return {"@context": CONTEXT_PRESENTATION["3"], "id": manifest_id, "type": "Manifest",
            "label": {"en": [title]},
            "metadata": [{"label": {"en": ["Date"]}, "value": {"none": [date]}}],
            "navDate": DEFAULT_NAV_DATE,
            "requiredStatement": {"label": {"en": ["Attribution"]}, "value": {"en": [attribution]}},
            "rights": license, "items": canvases}


def collection(collection_id: str, manifests: list[tuple[str, str]], version: str = "3",
               title: str = "A test collection") -> dict:
    """A Presentation 2.1 or 3.0 Collection of (manifest URL, label) pairs."""
    if version == "2":
        return {"@context": CONTEXT_PRESENTATION["2"], "@id": collection_id,
                "@type": "sc:Collection", "label": title,
                "manifests": [{"@id": url, "@type": "sc:Manifest", "label": label}
                              for url, label in manifests]}
    return {"@context": CONTEXT_PRESENTATION["3"], "id": collection_id, "type": "Collection",
            "label": {"en": [title]},
            "items": [{"id": url, "type": "Manifest", "label": {"en": [label]}}
                      for url, label in manifests]}
