"""IIIF Presentation 2.x / 3.0 manifests and Collections, read as plain JSON.

Why plain JSON: ``piffle`` 0.9.0 loads all 16 shared manifests but logs 3854 "missing
field" warnings on them, leaves image resources as raw dicts and reads a service only as
``resource["service"]["id"]`` (no ``@id``, no service lists, no version or level), and
``iiif-prezi3`` builds 3.0 only; what is left to do on top of either is all of this file.

What libraries publish is looser than the specs: v2 labels as strings, lists or
``{"@value", "@language"}`` objects; services as a dict or a list, ``@id`` or ``id``,
sometimes ending in ``/info.json``; ``oa:Choice`` / ``Choice`` bodies; HTML in
attributions; ranges typed as canvases (Göttingen). Every shape here is one a shared
manifest uses.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from archive.errors import ArchiveError

# Image API versions as the @context, type or profile of a service names them
_CONTEXT_VERSION = (("image-api/1.1/", "1.1"), ("/image/1/", "1.1"), ("/image/2/", "2"),
                    ("/image/3/", "3"))
_TYPE_VERSION = {"ImageService1": "1.1", "ImageService2": "2", "ImageService3": "3"}
# profile URIs without a context: 1.0/1.1 compliance pages, v2 level URIs, v3 "levelN"
_PROFILE_VERSION = (("image-api/", "1.1"), ("/image/2/", "2"), ("/image/3/", "3"))
_LEVEL = re.compile(r"level([012])\b")
# A service that names no level still answers the size and region requests every
# Image API level 1 requires; level 0 would forbid region requests nobody ruled out.
DEFAULT_LEVEL = 1
DEFAULT_VERSION = "2"  # a service whose context, type and profile are all silent
# metadata labels (lower case) that give a book's date when it has no navDate, as the
# shared manifests name it; not Stanford's "PublishDate" (when the scan went online)
DATE_LABELS = ("date", "datum", "date of publication", "published/created date",
               "publication date", "created published", "jahr", "year", "datering",
               "dating", "period")
PREFERRED_LANGUAGES = ("en", "none", "@none")
_NO_LANGUAGE = ("none", "@none", "")


@dataclass(frozen=True)
class ImageService:
    """An Image API service: where to ask, in which dialect, and what it may refuse."""

    id: str  # base URI, no trailing slash, no /info.json
    version: str  # "1.1" | "2" | "3"
    level: int  # 0, 1 or 2 (DEFAULT_LEVEL when the profile names none)
    width: int | None = None
    height: int | None = None
    sizes: tuple[tuple[int, int], ...] = ()  # ascending by width
    max_width: int | None = None
    max_height: int | None = None
    max_area: int | None = None
    # the version and level as the service object names them, not defaults: a URL can be
    # built before its info.json is read (``archive.iiif.book._sized_by_resource``)
    stated: bool = False


@dataclass(frozen=True)
class Canvas:
    """One page of the book, with or without an image."""

    index: int  # 0-based position in the sequence / items
    id: str
    label: str  # the page label as printed
    width: int  # the canvas's own size (0 if absent)
    height: int
    image_url: str | None  # the painting image resource as is; None: no image
    image_width: int | None
    image_height: int | None
    service: ImageService | None  # the preferred image service (see ``services``)
    thumbnail: str | None
    # every image service of the painting image, preferred first: Riksarkivet offers
    # the same image through ImageService3 and ImageService2
    services: tuple[ImageService, ...] = ()


@dataclass(frozen=True)
class Book:
    """A manifest: its pages in reading order and what it says of itself."""

    id: str
    version: str  # "2" | "3"
    title: str
    date: str
    attribution: str
    license: str
    rights: str
    required_statement: str  # "Label: value"
    canvases: tuple[Canvas, ...]
    ranges: int  # ranges / structures, nested ones counted
    languages: tuple[str, ...]


@dataclass(frozen=True)
class Collection:
    """A list of manifests and sub-collections, by id."""

    id: str
    title: str
    members: tuple[str, ...]
    member_kinds: tuple[str, ...]  # "manifest" | "collection" per member


def loads(data: bytes, name: str = "manifest") -> Book | Collection:
    """The manifest or collection in ``data``; ``manifest_unreadable`` when it is no JSON."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ArchiveError(f"{name} is not readable JSON", code="manifest_unreadable",
                           name=name) from None
    return parse(doc, name)


def parse(doc: Any, name: str = "manifest") -> Book | Collection:
    """A manifest (2.x or 3.0) or a collection; ``not_manifest`` for other JSON."""
    kind = _kind(doc)
    if kind == "manifest":
        return _book(doc)
    if kind == "collection":
        return _collection(doc)
    raise ArchiveError(f"{name} is not a IIIF manifest or collection", code="not_manifest",
                       name=name)


# ---- the document -------------------------------------------------------------------


def _kind(doc: Any) -> str:
    """"manifest", "collection" or "" from the type, else from what the document holds."""
    if not isinstance(doc, dict):
        return ""
    types = _as_list(doc.get("@type") or doc.get("type"))
    for t in types:
        short = str(t).rsplit(":", 1)[-1].lower()
        if short in ("manifest", "collection"):
            return short
    if "presentation" not in json.dumps(doc.get("@context", "")):
        return ""
    if "sequences" in doc:
        return "manifest"
    if any(k in doc for k in ("manifests", "collections", "members")):
        return "collection"
    return ""


def _version(doc: dict) -> str:
    context = json.dumps(doc.get("@context", ""))
    if "presentation/3" in context:
        return "3"
    if "presentation/2" in context or "sequences" in doc or "@id" in doc:
        return "2"
    return "3"


def _book(doc: dict) -> Book:
    version = _version(doc)
    raw = _raw_canvases(doc, version)
    canvases = tuple(_canvas(i, c, version) for i, c in enumerate(raw))
    return Book(id=_id(doc), version=version, title=text(doc.get("label")),
                date=_date(doc), attribution=_html_text(text(doc.get("attribution"))),
                license=" ".join(str(u) for u in _as_list(doc.get("license")) if u),
                rights=" ".join(str(u) for u in _as_list(doc.get("rights")) if u),
                required_statement=_statement(doc.get("requiredStatement")),
                canvases=canvases, ranges=_count_ranges(doc.get("structures")),
                languages=_languages(doc))


def _raw_canvases(doc: dict, version: str) -> list[dict]:
    if version == "2":
        sequences = _as_list(doc.get("sequences"))
        first = sequences[0] if sequences and isinstance(sequences[0], dict) else {}
        return [c for c in _as_list(first.get("canvases")) if isinstance(c, dict)]
    return [c for c in _as_list(doc.get("items"))
            if isinstance(c, dict) and c.get("type", "Canvas") == "Canvas"]


def _collection(doc: dict) -> Collection:
    """Members in order: v3 ``items``; v2 ``members``, then ``collections``, then
    ``manifests``. A member listed twice is kept once."""
    if _version(doc) == "3":
        entries = [(e, "manifest") for e in _as_list(doc.get("items"))]
    else:
        entries = [(e, kind) for key, kind in (("members", "manifest"),
                                               ("collections", "collection"),
                                               ("manifests", "manifest"))
                   for e in _as_list(doc.get(key))]
    ids: list[str] = []
    kinds: list[str] = []
    for entry, listed_as in entries:
        member_id = _id(entry)
        kind = _kind(entry) or listed_as
        if member_id and member_id not in ids:
            ids.append(member_id)
            kinds.append(kind)
    return Collection(id=_id(doc), title=text(doc.get("label")), members=tuple(ids),
                      member_kinds=tuple(kinds))


def _count_ranges(structures: Any) -> int:
    """Every entry of ``structures`` (whatever it calls itself: Göttingen types its
    ranges as canvases) and every range embedded in one, however deep (a loop, not
    recursion: a manifest's nesting is the publisher's to choose)."""
    todo = [e for e in _as_list(structures) if isinstance(e, dict)]
    count = 0
    while todo:
        entry = todo.pop()
        count += 1
        todo += [r for key in ("ranges", "members", "items")
                 for r in _as_list(entry.get(key)) if _is_range(r)]
    return count


def _is_range(entry: Any) -> bool:
    return isinstance(entry, dict) and str(entry.get("@type") or entry.get("type")) in (
        "sc:Range", "Range")


# ---- a canvas -------------------------------------------------------------------------


def _canvas(index: int, raw: dict, version: str) -> Canvas:
    resource = _painting_image(raw, version)
    services = _image_services(resource.get("service")) if resource else ()
    return Canvas(index=index, id=_id(raw), label=text(raw.get("label")),
                  width=_int(raw.get("width")) or 0, height=_int(raw.get("height")) or 0,
                  image_url=_id(resource) or None if resource else None,
                  image_width=_int(resource.get("width")) if resource else None,
                  image_height=_int(resource.get("height")) if resource else None,
                  service=services[0] if services else None,
                  thumbnail=_first_id(raw.get("thumbnail")), services=services)


def _painting_image(canvas: dict, version: str) -> dict | None:
    """The first painting annotation's image resource, a Choice resolved to its default
    (v2) or first item (v3)."""
    if version == "2":
        bodies = [a.get("resource") for a in _as_list(canvas.get("images"))
                  if isinstance(a, dict)]
    else:
        bodies = [b for page in _as_list(canvas.get("items")) if isinstance(page, dict)
                  for a in _as_list(page.get("items")) if isinstance(a, dict)
                  and a.get("motivation", "painting") in ("painting", "sc:painting")
                  for b in _as_list(a.get("body"))]
    for body in bodies:
        body = _chosen(body)
        if isinstance(body, dict) and (_id(body) or body.get("service")):
            return body
    return None


def _chosen(body: Any) -> Any:
    for _ in range(3):  # a Choice of Choices is as deep as anyone nests them
        if not isinstance(body, dict) or "Choice" not in str(body.get("@type") or
                                                               body.get("type")):
            return body
        options = _as_list(body.get("default")) or _as_list(body.get("items")) or \
            _as_list(body.get("item"))
        body = options[0] if options else None
    return body


def _first_id(value: Any) -> str | None:
    for item in _as_list(value):
        found = item if isinstance(item, str) else _id(item)
        if found:
            return found
    return None


# ---- image services -------------------------------------------------------------------


def _image_services(value: Any) -> tuple[ImageService, ...]:
    """The Image API services among ``value`` (others, such as auth, left out), the
    highest level first, then the newest version."""
    found = [service_from_json(s) for s in _as_list(value)
             if isinstance(s, dict) and _is_image_service(s)]
    found = [s for s in found if s.id]
    return tuple(sorted(found, key=lambda s: (-s.level, -float(s.version))))


def _is_image_service(raw: dict) -> bool:
    if str(raw.get("@type") or raw.get("type") or "") in _TYPE_VERSION:
        return True
    named = json.dumps([raw.get("@context"), raw.get("profile"), raw.get("protocol")])
    bare = [p for p in _as_list(raw.get("profile")) if isinstance(p, str)]
    return any(mark in named for mark in ("image-api", "api/image")) or any(
        _LEVEL.fullmatch(p) for p in bare)  # a 3.0 "level2" whose type was left out


def service_from_json(raw: dict) -> ImageService:
    """An Image API service from a manifest's service object or an info.json."""
    profiles = _as_list(raw.get("profile"))
    described = [p for p in profiles if isinstance(p, dict)]  # v2 puts max* in here
    limits = {key: _int(raw.get(key)) or next(
        (_int(p.get(key)) for p in described if _int(p.get(key))), None)
        for key in ("maxWidth", "maxHeight", "maxArea")}
    return ImageService(
        id=_service_id(raw), version=_service_version(raw), level=_service_level(profiles),
        width=_int(raw.get("width")), height=_int(raw.get("height")),
        sizes=_sizes(raw.get("sizes")), max_width=limits["maxWidth"],
        max_height=limits["maxHeight"], max_area=limits["maxArea"],
        stated=_says_version(raw) and _level_named(profiles) is not None)


def _service_id(raw: dict) -> str:
    sid = str(raw.get("@id") or raw.get("id") or "").strip()
    if sid.endswith("/info.json"):
        sid = sid[: -len("/info.json")]
    return sid.rstrip("/")


def _service_version(raw: dict) -> str:
    named = _versions_named(raw)
    if named:
        return named[0]
    profiles = " ".join(p for p in _as_list(raw.get("profile")) if isinstance(p, str))
    return "3" if _LEVEL.fullmatch(profiles.strip()) else DEFAULT_VERSION


def _versions_named(raw: dict) -> list[str]:
    """The Image API versions a service object names, first its type's, then its
    context's, then its profile's (the order ``_service_version`` trusts them in)."""
    named = [_TYPE_VERSION[str(t)] for t in _as_list(raw.get("@type") or raw.get("type"))
             if str(t) in _TYPE_VERSION]
    context = json.dumps(raw.get("@context", ""))
    named += [v for mark, v in _CONTEXT_VERSION if mark in context]
    profiles = " ".join(p for p in _as_list(raw.get("profile")) if isinstance(p, str))
    return named + [v for mark, v in _PROFILE_VERSION if mark in profiles]


def _service_level(profiles: list) -> int:
    match = _level_named(profiles)
    return int(match.group(1)) if match else DEFAULT_LEVEL


def _level_named(profiles: list) -> re.Match | None:
    for profile in profiles:
        match = _LEVEL.search(profile) if isinstance(profile, str) else None
        if match:
            return match
    return None


def _says_version(raw: dict) -> bool:
    """Whether the service object names one Image API version (by its type, context or a
    versioned profile, all that it gives agreeing) rather than none (``DEFAULT_VERSION``)
    or two (a 1.1 profile on an "ImageService2": its info.json says which)."""
    return len(set(_versions_named(raw))) == 1


def _sizes(value: Any) -> tuple[tuple[int, int], ...]:
    pairs = {(_int(s.get("width")), _int(s.get("height"))) for s in _as_list(value)
             if isinstance(s, dict)}
    return tuple(sorted((w, h) for w, h in pairs if w and h))


# ---- text -----------------------------------------------------------------------------


def text(value: Any) -> str:
    """One string from a label or value in any published shape, in the best language:
    "en", then no language, then the first given; several values joined by "; "."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict) and "@value" not in value:  # a v3 language map
        for lang in (*PREFERRED_LANGUAGES, *value):
            if value.get(lang):
                return "; ".join(str(v).strip() for v in _as_list(value[lang]))
        return ""
    items = [v if isinstance(v, dict) else {"@value": v} for v in _as_list(value)]
    langs = [str(v.get("@language") or "none") for v in items]
    for lang in (*PREFERRED_LANGUAGES, *langs):
        chosen = [str(v.get("@value", "")).strip()
                  for v, at in zip(items, langs, strict=True) if at == lang]
        if any(chosen):
            return "; ".join(c for c in chosen if c)
    return ""


def _statement(value: Any) -> str:
    if not isinstance(value, dict):
        return ""
    label, said = text(value.get("label")), _html_text(text(value.get("value")))
    return f"{label}: {said}" if label and said else said


def _date(doc: dict) -> str:
    if doc.get("navDate"):
        return str(doc["navDate"])
    for entry in _as_list(doc.get("metadata")):
        if isinstance(entry, dict) and text(entry.get("label")).lower() in DATE_LABELS:
            return text(entry.get("value"))
    return ""


def _languages(doc: dict) -> tuple[str, ...]:
    """Languages the book's own words are tagged with (label, summary, metadata,
    attribution, required statement, provider), sorted."""
    fields = [doc.get(k) for k in ("label", "description", "summary", "attribution",
                                   "requiredStatement", "metadata", "provider")]
    found: set[str] = set()
    todo: list[Any] = [fields]
    while todo:  # a loop, not recursion, for the same reason as _count_ranges
        value = todo.pop()
        if isinstance(value, list):
            todo += value
        elif isinstance(value, dict):
            found.update(_tagged_languages(value))
            todo += [value[k] for k in ("label", "value", "summary") if k in value]
    return tuple(sorted(found - set(_NO_LANGUAGE)))


def _tagged_languages(value: dict) -> set[str]:
    """A v2 ``{"@language": ..}`` value's language, or a v3 language map's keys."""
    if "@language" in value:
        return {str(value["@language"])}
    return {k for k, v in value.items() if k not in ("label", "value", "summary")
            and isinstance(v, list) and all(isinstance(x, str) for x in v)}


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in ("br", "p", "div", "li"):
            self.parts.append(" ")


def _html_text(value: str) -> str:
    """The text of an attribution that may be HTML (the v2 and v3 specs allow a few
    tags), on one line."""
    if "<" not in value:
        return " ".join(html.unescape(value).split())
    parser = _TextOnly()
    parser.feed(value)
    parser.close()
    return " ".join("".join(parser.parts).split())


# ---- small shapes -------------------------------------------------------------------


def _as_list(value: Any) -> list:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _id(obj: Any) -> str:
    if isinstance(obj, str):
        return obj
    if not isinstance(obj, dict):
        return ""
    return str(obj.get("@id") or obj.get("id") or "")


def _int(value: Any) -> int | None:
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None
