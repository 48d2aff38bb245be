"""archive.iiif.http against real servers on 127.0.0.1 (plain and TLS), never mocks."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from archive.errors import ArchiveError
from archive.iiif.http import (
    ALLOW_PRIVATE_ENV,
    Fetcher,
    Settings,
    _retry_after,
    check_url,
    fetcher,
    redirect_target,
)

ROOT = Path(__file__).resolve().parents[1]
SLOW_SECONDS = 0.3  # how long /slow holds a request, so that concurrent ones overlap


class _State:
    """What the server saw: hits per path, requests in flight per path and their maximum."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hits: Counter[str] = Counter()
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()


class _Handler(BaseHTTPRequestHandler):
    """Routes by the first path segment; the rest makes a path (and its counters) unique."""

    protocol_version = "HTTP/1.1"  # keep-alive, so pooled connections are used
    state: _State

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", **headers: str) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        parts = path.strip("/").split("/")
        with self.state.lock:
            self.state.hits[path] += 1
            n = self.state.hits[path]
        getattr(self, "r_" + parts[0].replace("-", "_"))(n, parts, path)

    def r_ok(self, n: int, parts: list[str], path: str) -> None:
        self._send(200, b"hello iiif", Content_Type="application/ld+json")

    def r_echo(self, n: int, parts: list[str], path: str) -> None:
        self._send(200, json.dumps(dict(self.headers)).encode(), Content_Type="application/json")

    def r_redirect_ok(self, n: int, parts: list[str], path: str) -> None:
        self._send(302, Location="/ok/after-redirect")

    def r_redirect_metadata(self, n: int, parts: list[str], path: str) -> None:
        self._send(302, Location="http://169.254.169.254/latest/meta-data/")

    def r_redirect_loop(self, n: int, parts: list[str], path: str) -> None:
        self._send(301, Location=path)

    def r_limited(self, n: int, parts: list[str], path: str) -> None:
        self._send(429, Retry_After="1") if n == 1 else self._send(200, b"at last")

    def r_flaky(self, n: int, parts: list[str], path: str) -> None:
        self._send(503) if n <= 2 else self._send(200, b"third time")

    def r_drop(self, n: int, parts: list[str], path: str) -> None:
        if n == 1:
            self.close_connection = True  # hang up without a word
        else:
            self._send(200, b"back")

    def r_down(self, n: int, parts: list[str], path: str) -> None:
        self._send(503)

    def r_hour(self, n: int, parts: list[str], path: str) -> None:
        self._send(503, Retry_After="3600")

    def r_missing(self, n: int, parts: list[str], path: str) -> None:
        self._send(404, b"no such manifest")

    def r_big(self, n: int, parts: list[str], path: str) -> None:
        self._send(200, b"x" * int(parts[1]))

    def r_stream(self, n: int, parts: list[str], path: str) -> None:
        """``int(parts[1])`` bytes with no Content-Length (ended by closing)."""
        self.send_response(200)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        left = int(parts[1])
        try:
            while left > 0:
                self.wfile.write(b"y" * min(left, 65536))
                left -= 65536
        except OSError:
            pass  # the client hung up once it had seen enough

    def r_slow(self, n: int, parts: list[str], path: str) -> None:
        with self.state.lock:
            self.state.in_flight[path] += 1
            top = max(self.state.max_in_flight[path], self.state.in_flight[path])
            self.state.max_in_flight[path] = top
        time.sleep(SLOW_SECONDS)
        with self.state.lock:
            self.state.in_flight[path] -= 1
        self._send(200, b"slow")


class _Server:
    def __init__(self, context: ssl.SSLContext | None = None) -> None:
        self.state = _State()
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        if context is not None:
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str, host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Fast retries, and slot lock files of this test only."""
    return Settings(backoff=0.05, retries=3, slot_dir=str(tmp_path / "slots"))


@pytest.fixture
def local(settings: Settings) -> Iterator[Fetcher]:
    f = Fetcher(settings, allow_private=True)
    yield f
    f.close()


def _code(exc: pytest.ExceptionInfo[ArchiveError]) -> str:
    return exc.value.code


# ---- what is refused before connecting


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x",
                                 "gopher://example.org/", "data:text/plain,hi"])
def test_other_schemes_are_refused(url: str) -> None:
    with pytest.raises(ArchiveError) as exc:
        check_url(url, allow_private=True)
    assert _code(exc) == "url_scheme"
    assert exc.value.fields == {"scheme": url.split(":")[0]}


@pytest.mark.parametrize("url", ["", "hello", "http://", "http:///x", "//example.org/x",
                                 "http://exa mple.org/", "http://[::1/"])
def test_malformed_urls(url: str) -> None:
    with pytest.raises(ArchiveError) as exc:
        check_url(url, allow_private=True)
    assert _code(exc) == "url_malformed"


PRIVATE = ["127.0.0.1", "localhost", "[::1]", "10.0.0.1", "192.168.1.1", "172.16.5.4",
           "100.64.0.1", "[fc00::1]", "[::ffff:127.0.0.1]", "[2002:7f00:1::]"]
NEVER = ["169.254.169.254", "[fd00:ec2::254]", "100.100.100.200", "0.0.0.0", "[::]",
         "[fe80::1]", "224.0.0.1", "240.0.0.1", "255.255.255.255",
         "[::ffff:169.254.169.254]", "[64:ff9b::a9fe:a9fe]", "[ff02::1]"]


@pytest.mark.parametrize("host", PRIVATE + NEVER)
def test_local_hosts_are_refused(host: str) -> None:
    with pytest.raises(ArchiveError) as exc:
        check_url(f"http://{host}/manifest.json", allow_private=False)
    assert _code(exc) == "url_private"
    assert exc.value.fields["host"] == host.strip("[]")


@pytest.mark.parametrize("host", NEVER)
def test_metadata_and_link_local_are_refused_even_when_private_is_allowed(host: str) -> None:
    with pytest.raises(ArchiveError) as exc:
        check_url(f"http://{host}/latest/meta-data/", allow_private=True)
    assert _code(exc) == "url_private"


@pytest.mark.parametrize("host", PRIVATE)
def test_private_hosts_are_admitted_when_allowed(host: str) -> None:
    check_url(f"http://{host}/manifest.json", allow_private=True)


@pytest.mark.parametrize("host", ["93.184.215.14", "[2606:4700:4700::1111]",
                                  "[::ffff:93.184.215.14]"])
def test_public_addresses_pass(host: str) -> None:
    check_url(f"https://{host}/iiif/manifest.json", allow_private=False)


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "127.1"])
def test_numeric_forms_of_loopback_are_refused_after_resolution(host: str) -> None:
    try:
        socket.getaddrinfo(host, 80)
    except socket.gaierror:
        pytest.skip(f"this resolver does not read {host} as an address")
    with pytest.raises(ArchiveError) as exc:
        check_url(f"http://{host}/", allow_private=False)
    assert _code(exc) == "url_private"


def test_env_decides_when_not_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_PRIVATE_ENV, raising=False)
    with pytest.raises(ArchiveError):
        check_url("http://127.0.0.1/")
    assert Fetcher().allow_private is False
    monkeypatch.setenv(ALLOW_PRIVATE_ENV, "1")
    check_url("http://127.0.0.1/")
    assert Fetcher().allow_private is True
    with pytest.raises(ArchiveError):
        check_url("http://169.254.169.254/")


def test_a_refused_host_is_never_contacted(server: _Server, settings: Settings) -> None:
    with pytest.raises(ArchiveError) as exc:
        Fetcher(settings, allow_private=False).get(server.url("/ok/refused"))
    assert _code(exc) == "url_private"
    assert server.state.hits["/ok/refused"] == 0


# ---- redirects


def test_redirect_hop_is_checked() -> None:
    with pytest.raises(ArchiveError) as exc:
        redirect_target("http://93.184.215.14/a", "http://127.0.0.1/x", allow_private=False)
    assert _code(exc) == "url_private"
    with pytest.raises(ArchiveError) as exc:
        redirect_target("http://93.184.215.14/a", "//[::1]:8080/x", allow_private=False)
    assert _code(exc) == "url_private"
    with pytest.raises(ArchiveError) as exc:
        redirect_target("http://93.184.215.14/a", "file:///etc/passwd", allow_private=False)
    assert _code(exc) == "url_scheme"
    assert redirect_target("http://93.184.215.14/a/b", "../c?d=1",
                           allow_private=False) == "http://93.184.215.14/c?d=1"


def test_redirects_are_followed(server: _Server, local: Fetcher) -> None:
    got = local.get(server.url("/redirect-ok/1"))
    assert (got.status, got.content, got.url) == (200, b"hello iiif",
                                                  server.url("/ok/after-redirect"))
    assert got.content_type == "application/ld+json"
    assert local.requests == 2


def test_redirect_to_cloud_metadata_is_refused(server: _Server, local: Fetcher) -> None:
    with pytest.raises(ArchiveError) as exc:
        local.get(server.url("/redirect-metadata/1"))
    assert (_code(exc), exc.value.fields) == ("url_private", {"host": "169.254.169.254"})
    assert local.requests == 1


def test_redirect_loop_stops(server: _Server, tmp_path: Path) -> None:
    f = Fetcher(Settings(max_redirects=3, slot_dir=str(tmp_path)), allow_private=True)
    with pytest.raises(ArchiveError) as exc:
        f.get(server.url("/redirect-loop/1"))
    assert (_code(exc), exc.value.fields["status"]) == ("url_status", 301)
    assert server.state.hits["/redirect-loop/1"] == 4


# ---- pinning: the connection goes to the checked address, the name stays in Host and SNI


def test_host_header_and_user_agent(server: _Server, local: Fetcher) -> None:
    seen = json.loads(local.get(server.url("/echo/1", host="localhost")).content)
    assert seen["Host"] == f"localhost:{server.port}"
    assert seen["User-Agent"].startswith("Borde/")


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[_Server, ssl.SSLContext]]:
    """A TLS server whose certificate names localhost only (no IP), and a context trusting it."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj",
                    "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    s = _Server(served)
    yield s, ssl.create_default_context(cafile=str(cert))
    s.close()


def test_tls_verifies_the_name_while_connecting_to_the_ip(
        tls: tuple[_Server, ssl.SSLContext], settings: Settings) -> None:
    server, trust = tls
    f = Fetcher(settings, allow_private=True, verify=trust)
    seen = json.loads(f.get(server.url("/echo/tls", host="localhost", scheme="https")).content)
    assert seen["Host"] == f"localhost:{server.port}"


def test_tls_name_mismatch_fails_without_retries(tls: tuple[_Server, ssl.SSLContext],
                                                 tmp_path: Path) -> None:
    server, trust = tls
    f = Fetcher(Settings(backoff=2.0, slot_dir=str(tmp_path)), allow_private=True, verify=trust)
    start = time.monotonic()
    with pytest.raises(ArchiveError) as exc:  # the certificate does not name 127.0.0.1
        f.get(server.url("/ok/by-ip", scheme="https"))
    assert _code(exc) == "url_unreachable"
    assert time.monotonic() - start < 1.5


# ---- retries


def test_429_retry_after_is_honoured(server: _Server, local: Fetcher) -> None:
    start = time.monotonic()
    assert local.get(server.url("/limited/1")).content == b"at last"
    assert time.monotonic() - start >= 1.0
    assert server.state.hits["/limited/1"] == 2


def test_503_twice_then_success(server: _Server, local: Fetcher) -> None:
    assert local.get(server.url("/flaky/1")).content == b"third time"
    assert local.requests == 3


def test_dropped_connection_is_retried(server: _Server, local: Fetcher) -> None:
    assert local.get(server.url("/drop/1")).content == b"back"
    assert server.state.hits["/drop/1"] == 2


def test_always_503_gives_url_status(server: _Server, local: Fetcher) -> None:
    with pytest.raises(ArchiveError) as exc:
        local.get(server.url("/down/1"))
    assert (_code(exc), exc.value.fields) == ("url_status", {"host": "127.0.0.1",
                                                              "status": 503})
    assert server.state.hits["/down/1"] == local.settings.retries + 1


def test_404_is_not_retried(server: _Server, local: Fetcher) -> None:
    with pytest.raises(ArchiveError) as exc:
        local.get(server.url("/missing/1"))
    assert exc.value.fields["status"] == 404
    assert server.state.hits["/missing/1"] == 1


def test_retry_after_of_an_hour_fails_fast(server: _Server, local: Fetcher) -> None:
    start = time.monotonic()
    with pytest.raises(ArchiveError) as exc:
        local.get(server.url("/hour/1"))
    assert _code(exc) == "url_status"
    assert time.monotonic() - start < 1.0
    assert server.state.hits["/hour/1"] == 1


def test_retry_after_as_http_date() -> None:
    import httpx

    soon = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    wait = _retry_after(httpx.Headers({"Retry-After": soon}))
    assert wait is not None and 28 <= wait <= 31
    assert _retry_after(httpx.Headers({"Retry-After": "soon-ish"})) is None


def test_nobody_listening_is_unreachable(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free once closed: nothing listens there
    f = Fetcher(Settings(backoff=0.01, retries=2, slot_dir=str(tmp_path)), allow_private=True)
    with pytest.raises(ArchiveError) as exc:
        f.get(f"http://127.0.0.1:{port}/manifest.json")
    assert (_code(exc), exc.value.fields) == ("url_unreachable", {"host": "127.0.0.1"})
    assert f.requests == 3


# ---- size cap


def _slots_free(settings: Settings) -> bool:
    for path in Path(settings.slot_dir).glob("*.lock"):
        with open(path) as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
    return True


@pytest.mark.parametrize("path", ["/big/5000", "/stream/5000", "/stream/50000000"])
def test_too_big_is_refused(server: _Server, local: Fetcher, path: str,
                            settings: Settings) -> None:
    with pytest.raises(ArchiveError) as exc:
        local.get(server.url(path), max_bytes=4096)
    assert (_code(exc), exc.value.fields["host"]) == ("url_too_big", "127.0.0.1")
    assert exc.value.fields["max_mb"] == pytest.approx(4096 / 2**20, rel=0.01)
    assert local.bytes_fetched < 1 << 20  # stopped reading, did not swallow 50 MB
    assert _slots_free(settings)


def test_bytes_fetched_counts_body_bytes(server: _Server, local: Fetcher) -> None:
    assert len(local.get(server.url("/big/3000")).content) == 3000
    assert len(local.get(server.url("/stream/1000"), max_bytes=1000).content) == 1000
    assert (local.bytes_fetched, local.requests) == (4000, 2)


# ---- politeness


def _concurrent_gets(f: Fetcher, url: str, n: int) -> list[bytes]:
    results: list[bytes] = []
    threads = [threading.Thread(target=lambda: results.append(f.get(url).content))
               for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_per_host_limit_across_threads(server: _Server, local: Fetcher,
                                       settings: Settings) -> None:
    assert _concurrent_gets(local, server.url("/slow/threads"), 6) == [b"slow"] * 6
    assert server.state.max_in_flight["/slow/threads"] == 2
    assert _slots_free(settings)
    # without the limit the server does see more at once: the count above can fail
    wide = Fetcher(Settings(per_host=6, slot_dir=settings.slot_dir), allow_private=True)
    assert len(_concurrent_gets(wide, server.url("/slow/wide"), 6)) == 6
    assert server.state.max_in_flight["/slow/wide"] > 2


CLIENT = """
import sys, threading, time
from archive.iiif.http import Fetcher, Settings
url, slots, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
f = Fetcher(Settings(slot_dir=slots, backoff=0.05), allow_private=True)
got = []
threads = [threading.Thread(target=lambda: got.append(f.get(url).content)) for _ in range(3)]
time.sleep(max(0.0, start - time.time()))
for t in threads: t.start()
for t in threads: t.join()
sys.exit(0 if got == [b"slow"] * 3 else 1)
"""


def test_per_host_limit_across_processes(server: _Server, settings: Settings) -> None:
    start = str(time.time() + 1.5)  # both processes begin together, after their imports
    url = server.url("/slow/processes")
    procs = [subprocess.Popen([sys.executable, "-c", CLIENT, url, settings.slot_dir, start],
                              cwd=ROOT) for _ in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert server.state.hits["/slow/processes"] == 6
    assert server.state.max_in_flight["/slow/processes"] == 2


# ---- the shared fetcher


def test_shared_fetcher_is_one_per_process() -> None:
    mine = fetcher()
    assert fetcher() is mine
    pid = os.fork()
    if pid == 0:  # the child must get its own, never the parent's pooled sockets
        os._exit(0 if fetcher() is not mine and fetcher() is fetcher() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
