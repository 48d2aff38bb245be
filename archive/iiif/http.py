"""The one way Borde fetches a URL: manifests, info.json and page images of IIIF servers.

Anyone can type a URL into the public Space, so every fetch is checked before it connects
(SSRF): only http/https, and never a host that resolves to a loopback, private, link-local,
multicast, reserved or otherwise non-public address. The check runs on the resolved
addresses, again on every redirect hop (redirects are followed here, not by httpx), and the
connection goes to the very address that was checked (the URL's host is rewritten to that IP,
the ``Host`` header and TLS SNI keep the name, so the certificate is still verified against
it): a DNS answer that changes between check and connect (rebinding) cannot slip through.

``allow_private`` (default: env ``BORDE_ALLOW_PRIVATE_URLS=1``, for tests and a curator's own
network) admits loopback, RFC 1918, CGNAT and IPv6 unique-local hosts only. Link-local
(169.254.0.0/16, where cloud metadata such as 169.254.169.254 hands out credentials, and
fe80::/10), the known metadata addresses inside private ranges, unspecified, multicast and
reserved addresses are refused ALWAYS: no local IIIF server lives there, a leaked token does.

Politeness: at most ``per_host`` requests in flight per host across every process of the
machine (``flock`` on lock files, since the build runs worker processes), retries with
exponential backoff and jitter on 429/5xx/timeouts/drops, ``Retry-After`` honoured.
"""

from __future__ import annotations

import email.utils
import errno
import fcntl
import ipaddress
import os
import random
import re
import socket
import ssl
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

# What httpx and httpcore import only when installed, and a synchronous client never
# uses: httpx's command-line client (click, rich, pygments: 4 MB of RSS in each of a
# build's processes, 33 ms) and the trio async framework (3 MB). Hidden while they are
# imported, then shown again, so anyone else's later import of them works as ever.
_HIDDEN = [m for m, reader in (("httpx._main", "httpx"), ("trio", "httpcore"))
           if m not in sys.modules and reader not in sys.modules]
for _name in _HIDDEN:
    sys.modules[_name] = None  # type: ignore[assignment]
try:
    import httpcore  # noqa: E402, F401  (it reads trio's absence when imported)
    import httpx  # noqa: E402
finally:
    for _name in _HIDDEN:
        if sys.modules.get(_name, 0) is None:
            del sys.modules[_name]

from archive.errors import ArchiveError  # noqa: E402

ALLOW_PRIVATE_ENV = "BORDE_ALLOW_PRIVATE_URLS"
MIB = 1 << 20
# Statuses worth asking again (RFC 9110: overload, gateway trouble; 429: rate limit).
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# A host as httpx gives it (IDNA-encoded): DNS labels, or an IP literal without brackets.
HOST_CHARS = re.compile(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+")


@dataclass(frozen=True)
class Settings:
    """Every knob of the fetcher, once."""

    # Two in flight per host, machine-wide: what crawler etiquette and most IIIF servers
    # (iipsrv, Cantaloupe behind a small VM) tolerate without rate-limiting us.
    per_host: int = 2
    # Seconds to open a connection: a live server answers in well under a second; ten covers
    # a slow TLS handshake across an ocean without hanging a build on a dead host.
    connect_timeout: float = 10.0
    # Seconds between two bytes: image servers may render a large region for a while.
    read_timeout: float = 30.0
    # Tries after the first, on 429/5xx/timeouts/drops: with backoff 0.5 s they span ~7 s,
    # long enough for a restarting server or a brief overload.
    retries: int = 4
    # Seconds before the first retry, doubled each retry, jittered so workers spread out.
    backoff: float = 0.5
    # A Retry-After longer than this (seconds) fails the request instead of sleeping: a
    # server asking for an hour is not coming back within a build.
    max_retry_after: float = 60.0
    # Largest body accepted: a full-size IIIF page image is a few MB, a manifest of a
    # thousand canvases a few MB; 64 MB leaves room and stops a hostile endless stream.
    max_bytes: int = 64 << 20
    # Redirect hops followed (each one checked): real IIIF servers use one or two
    # (http -> https, a moved manifest).
    max_redirects: int = 5
    # One attempt, connect to last byte, may last this long (seconds): a server dripping a
    # byte every few seconds stays under read_timeout and would otherwise hold a worker.
    max_seconds: float = 300.0
    # Folder of the per-host slot lock files; "" is <tempdir>/borde-http-slots (shared by
    # every process of the machine, which is the point).
    slot_dir: str = ""
    # Who is asking, with a way to reach us (what IIIF providers ask of harvesters).
    user_agent: str = "Borde/1.0 (+https://huggingface.co/spaces/borde; IIIF dataset builder)"


@dataclass(frozen=True)
class Response:
    """A 2xx answer read in full; ``url`` is the final one, after redirects."""

    url: str
    status: int
    content: bytes
    content_type: str


def _nets(*cidrs: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(c) for c in cidrs)


# Networks a developer may run a test or in-house IIIF server on: admitted with allow_private.
PRIVATE_NETS = _nets(
    "127.0.0.0/8",  # loopback (RFC 1122)
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",  # private (RFC 1918)
    "100.64.0.0/10",  # carrier-grade NAT (RFC 6598)
    "::1/128",  # IPv6 loopback
    "fc00::/7",  # IPv6 unique local (RFC 4193)
)
# Never fetched, whatever allow_private says (IANA special-purpose registries).
NEVER_NETS = _nets(
    "169.254.169.254/32", "fd00:ec2::254/128",  # AWS/GCP/Azure metadata (v4, AWS v6)
    "100.100.100.200/32",  # Alibaba Cloud metadata (inside CGNAT)
    "0.0.0.0/8", "::/128",  # "this host" / unspecified: connects to ourselves
    "169.254.0.0/16", "fe80::/10",  # link-local: where metadata services live
    "224.0.0.0/4", "ff00::/8",  # multicast
    "240.0.0.0/4",  # reserved, and the broadcast 255.255.255.255
    "192.0.0.0/24", "198.18.0.0/15",  # IETF protocol assignments, benchmarking
    "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",  # documentation
    "2001:db8::/32", "3fff::/20",  # IPv6 documentation
    "2001::/32",  # Teredo: hides an IPv4 address we cannot check
    "64:ff9b:1::/48",  # local-use NAT64 (RFC 8215)
)
GLOBAL_V6 = ipaddress.ip_network("2000::/3")  # IPv6 global unicast: nothing else is internet
NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known NAT64 prefix (RFC 6052)


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, 6to4, NAT64), to judge that one."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def ip_refused(address: str, allow_private: bool) -> bool:
    """Whether Borde must not connect to ``address`` (see the module docstring)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 scope ("%eth0")
    if isinstance(ip, ipaddress.IPv6Address):
        v4 = _embedded_v4(ip)
        if v4 is not None:
            return ip_refused(str(v4), allow_private)
    if any(ip in net for net in NEVER_NETS):
        return True
    if any(ip in net for net in PRIVATE_NETS):
        return not allow_private
    return isinstance(ip, ipaddress.IPv6Address) and ip not in GLOBAL_V6


def _allow_private(allow_private: bool | None) -> bool:
    if allow_private is None:
        return os.environ.get(ALLOW_PRIVATE_ENV) == "1"
    return allow_private


def _parse(url: str) -> httpx.URL:
    """``url`` as an http(s) URL with a host, or the ArchiveError that says what it is not."""
    shown = url if len(url) <= 120 else url[:117] + "..."
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise ArchiveError(f"{shown} is not a web address.", code="url_malformed") from exc
    if not parsed.scheme:
        raise ArchiveError(f"{shown} is not a web address.", code="url_malformed")
    if parsed.scheme not in ("http", "https"):
        raise ArchiveError(f"Only http and https addresses can be fetched, not "
                           f"{parsed.scheme}.", code="url_scheme", scheme=parsed.scheme)
    if not HOST_CHARS.fullmatch(parsed.raw_host.decode("ascii")):
        raise ArchiveError(f"{shown} has no valid host name.", code="url_malformed")
    return parsed


def _resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (a literal IP resolves to itself)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ArchiveError(f"The server {host} could not be found.", code="url_unreachable",
                           host=host) from exc
    addresses = list(dict.fromkeys(info[4][0] for info in infos))
    if not addresses:
        raise ArchiveError(f"The server {host} could not be found.", code="url_unreachable",
                           host=host)
    return addresses


def _checked(url: str, allow_private: bool) -> tuple[httpx.URL, list[str]]:
    """The parsed URL and the addresses it may be fetched from; every one is checked, since
    a host answering with one public and one private address must not be fetched at all."""
    parsed = _parse(url)
    host = parsed.raw_host.decode("ascii")
    addresses = _resolve(host, parsed.port or (443 if parsed.scheme == "https" else 80))
    if any(ip_refused(a, allow_private) for a in addresses):
        hint = ("" if allow_private or any(ip_refused(a, True) for a in addresses) else
                " (on your own network, set BORDE_ALLOW_PRIVATE_URLS=1)")
        raise ArchiveError(f"The address {host} is on a private or local network, which "
                           f"Borde does not fetch from{hint}.", code="url_private", host=host)
    return parsed, addresses


def check_url(url: str, allow_private: bool | None = None) -> None:
    """Raise the ArchiveError (url_malformed, url_scheme, url_private, url_unreachable) that
    fetching ``url`` would meet before connecting; DNS is resolved and every address judged."""
    _checked(url, _allow_private(allow_private))


def redirect_target(url: str, location: str, allow_private: bool | None = None) -> str:
    """The absolute URL a redirect from ``url`` to ``location`` leads to, checked like the
    first (each hop may point anywhere, 169.254.169.254 included)."""
    target = str(_parse(url).join(location))
    check_url(target, allow_private)
    return target


# Slot lock files held by this process, closed (not unlocked) in a forked child: the child's
# copy would otherwise keep the parent's slot taken for as long as the child lives.
_HELD: set[int] = set()


def _close_held_in_child() -> None:
    for fd in list(_HELD):
        os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


class _Slots:
    """``per_host`` lock files per host; holding one (``flock``) is a request in flight.
    ``flock`` locks belong to an open file, so threads of one process exclude each other too,
    and the kernel frees a slot when its process dies."""

    def __init__(self, folder: Path, per_host: int) -> None:
        self.folder, self.per_host = folder, per_host

    def _paths(self, host: str) -> list[Path]:
        name = re.sub(r"[^A-Za-z0-9.-]", "_", host)[:200]
        return [self.folder / f"{name}.{k}.lock" for k in range(self.per_host)]

    def _try(self, path: Path, wait: bool = False) -> int | None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return None
            raise
        _HELD.add(fd)
        return fd

    @contextmanager
    def hold(self, host: str) -> Iterator[None]:
        """Wait for a free slot of ``host``, hold it for the block, free it even on errors."""
        self.folder.mkdir(parents=True, exist_ok=True)
        paths = self._paths(host)
        fd = None
        for path in random.sample(paths, len(paths)):
            fd = self._try(path)
            if fd is not None:
                break
        else:  # all taken: wait on one, woken by the kernel the moment it is freed (a
            fd = self._try(random.choice(paths), wait=True)  # poll slept 25-75 ms a turn)
        try:
            yield
        finally:
            _HELD.discard(fd)
            os.close(fd)


@dataclass
class _Answer:
    """One attempt's answer: status, headers, and the body (read only for a 2xx)."""

    status: int
    headers: httpx.Headers
    content: bytes = b""


# Failures of one attempt worth another: timeouts, refused/reset/dropped connections.
_RETRY_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


def _tls_refused(exc: BaseException) -> bool:
    """A certificate or TLS failure: the same again on every retry, so not retried."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds a ``Retry-After`` asks for (delta seconds or an HTTP date), None if none."""
    value = headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _too_big(host: str, max_bytes: int) -> ArchiveError:
    mb = float(f"{max_bytes / MIB:.3g}")
    return ArchiveError(f"The server {host} sent more than {mb:g} MB, more than Borde "
                        "accepts.", code="url_too_big", host=host, max_mb=mb)


def _status_error(host: str, status: int) -> ArchiveError:
    return ArchiveError(f"The server {host} answered with HTTP status {status}.",
                        code="url_status", host=host, status=status)


def _unreachable(host: str) -> ArchiveError:
    return ArchiveError(f"The server {host} could not be reached.", code="url_unreachable",
                        host=host)


@dataclass
class Fetcher:
    """Checked, polite, size-capped GETs through pooled connections (one ``httpx.Client``
    per host: a connection opened to an IP with one name's SNI must never carry another
    name's requests, which a single pool keyed by IP would do). Thread-safe.

    ``verify``: the TLS trust (an ``ssl.SSLContext``; True is the system's CAs).
    """

    settings: Settings = field(default_factory=Settings)
    allow_private: bool | None = None
    verify: ssl.SSLContext | bool = True
    bytes_fetched: int = 0  # body bytes received (failed attempts too), for the bench
    requests: int = 0  # HTTP requests sent (each retry and redirect hop counts)

    def __post_init__(self) -> None:
        self.allow_private = _allow_private(self.allow_private)
        folder = self.settings.slot_dir or Path(tempfile.gettempdir()) / "borde-http-slots"
        self._slots = _Slots(Path(folder), self.settings.per_host)
        self._clients: dict[tuple[str, str, int | None], httpx.Client] = {}
        self._lock = threading.Lock()
        self._pid = os.getpid()

    def _client(self, url: httpx.URL) -> httpx.Client:
        key = (url.scheme, url.raw_host.decode("ascii"), url.port)
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                s = self.settings
                client = httpx.Client(
                    timeout=httpx.Timeout(s.read_timeout, connect=s.connect_timeout),
                    follow_redirects=False,  # each hop is checked by get()
                    trust_env=False,  # a proxy from the environment would bypass the pinning
                    verify=self.verify,
                    headers={"User-Agent": s.user_agent})
                self._clients[key] = client
            return client

    def get(self, url: str, max_bytes: int | None = None) -> Response:
        """The body of ``url`` after redirects (each hop checked), or an ArchiveError:
        url_malformed/url_scheme/url_private, url_unreachable, url_status, url_too_big."""
        cap = self.settings.max_bytes if max_bytes is None else max_bytes
        current = url
        for _hop in range(self.settings.max_redirects + 1):
            target, addresses = _checked(current, bool(self.allow_private))
            answer = self._with_retries(target, addresses, cap)
            location = answer.headers.get("location")
            if answer.status in REDIRECT_STATUSES and location:
                current = str(target.join(location))
                continue
            if not 200 <= answer.status < 300:
                raise _status_error(target.raw_host.decode("ascii"), answer.status)
            return Response(str(target), answer.status, answer.content,
                            answer.headers.get("content-type", ""))
        raise ArchiveError(f"{_parse(url).raw_host.decode('ascii')} redirected more than "
                           f"{self.settings.max_redirects} times.", code="url_status",
                           host=_parse(url).raw_host.decode("ascii"), status=answer.status)

    def _with_retries(self, target: httpx.URL, addresses: list[str], cap: int) -> _Answer:
        """One hop, tried again on 429/5xx/timeouts/drops; each try goes to a checked address
        (the next one after a connection failure)."""
        s = self.settings
        host = target.raw_host.decode("ascii")
        for attempt in range(s.retries + 1):
            last = attempt == s.retries
            try:
                answer = self._attempt(target, addresses[attempt % len(addresses)], cap)
            except _RETRY_ERRORS as exc:
                if last or _tls_refused(exc):
                    raise _unreachable(host) from exc
                delay = None
            else:
                if answer.status not in RETRY_STATUSES or last:
                    return answer
                delay = _retry_after(answer.headers)
                if delay is not None and delay > s.max_retry_after:
                    return answer  # fails now as url_status: no hour-long sleep
            if delay is None:
                delay = s.backoff * 2**attempt * (0.5 + random.random())
            time.sleep(delay)
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _attempt(self, target: httpx.URL, ip: str, cap: int) -> _Answer:
        """One request to ``ip`` for ``target`` (Host and SNI keep its name), in a host slot."""
        host = target.raw_host.decode("ascii")
        extensions = {"sni_hostname": host} if target.scheme == "https" else {}
        with self._slots.hold(host):
            self._count(requests=1)
            deadline = time.monotonic() + self.settings.max_seconds
            with self._client(target).stream(
                    "GET", target.copy_with(host=ip), extensions=extensions,
                    headers={"Host": target.netloc.decode("ascii")}) as response:
                try:
                    if not response.is_success:
                        return _Answer(response.status_code, response.headers)
                    body = _read_capped(response, cap, host, deadline)
                finally:
                    self._count(fetched=response.num_bytes_downloaded)
        return _Answer(response.status_code, response.headers, body)

    def _count(self, requests: int = 0, fetched: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.bytes_fetched += fetched

    def close(self) -> None:
        """Close every pooled connection."""
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            client.close()


def _read_capped(response: httpx.Response, cap: int, host: str, deadline: float) -> bytes:
    """The body, refused as soon as it is known (Content-Length) or seen (stream) over
    ``cap``; one past ``deadline`` is given up, not retried (the server drips on purpose or
    is too slow to ever finish)."""
    length = response.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
        raise _too_big(host, cap)
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise _too_big(host, cap)
        if time.monotonic() > deadline:
            raise _unreachable(host)
        chunks.append(chunk)
    return b"".join(chunks)


_shared: Fetcher | None = None
_shared_lock = threading.Lock()


def _new_lock_in_child() -> None:
    global _shared_lock
    _shared_lock = threading.Lock()  # another thread of the parent may have held it


os.register_at_fork(after_in_child=_new_lock_in_child)


def fetcher() -> Fetcher:
    """This process's shared Fetcher, made on first use and made again in a forked child (a
    parent's pooled sockets must not be shared with it)."""
    global _shared
    with _shared_lock:
        # the env is read on each call: a test (or a curator's own server) may set it late
        if (_shared is None or _shared._pid != os.getpid()
                or _shared.allow_private != _allow_private(None)):
            _shared = Fetcher()
        return _shared
