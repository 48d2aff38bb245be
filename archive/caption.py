"""Captions from a template that a stranger on a public Space may type.

``str.format`` can walk attributes (``{0.__class__}``) and index into
objects, so a template is checked first: only the named fields below, with
no attribute access, indexing or conversion, are accepted.
"""

from __future__ import annotations

import re
import string

from archive.errors import ArchiveError

DEFAULT_CAPTION = "an engraving from {source}, page {page}"
# What the default becomes when the page prints a title or caption ({printed}) and
# when a captioning model said what the picture shows ({content}).
PRINTED_CAPTION = "{trigger}, {printed}"
CONTENT_CAPTION = "{trigger}, {content}"
CONTENT_PRINTED_CAPTION = "{trigger}, {content}, {printed}"
FIELDS = ("source", "page", "trigger", "printed", "content", "title", "date", "label")
# What a IIIF manifest says of the book and the page (``RegionRecord.origin``); a PDF
# has none of them, and an empty field leaves no tag behind.
ORIGIN_FIELDS = ("title", "date", "label")
MAX_LEN = 500
_EMPTY_TAGS = re.compile(r"\s*,(?:\s*,)+")


def check_template(template: str) -> str:
    """The template itself, or an ``ArchiveError`` naming what is not allowed."""
    if len(template) > MAX_LEN:
        raise ArchiveError(f"caption template is longer than {MAX_LEN} characters",
                           code="caption_long", max=MAX_LEN)
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ArchiveError(f"caption template is malformed: {exc}",
                           code="caption_malformed") from None
    for _literal, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in FIELDS or conversion or (spec and not spec.isdigit()):
            allowed = ", ".join("{" + f + "}" for f in FIELDS)
            raise ArchiveError(f"caption template field {{{field}}} is not allowed; use {allowed}",
                               code="caption_field", field="{" + field + "}", allowed=allowed)
    return template


def template_for(template: str, printed: str = "", content: str = "") -> str:
    """The default template says what the page and the model know; a curator's own stays."""
    if template != DEFAULT_CAPTION or not (printed or content):
        return template
    if content:
        return CONTENT_PRINTED_CAPTION if printed else CONTENT_CAPTION
    return PRINTED_CAPTION


def make_caption(template: str, source: str, page: int, trigger: str | None = None,
                 printed: str = "", content: str = "", origin: dict | None = None) -> str:
    """Fill a checked template; a trigger word leads the caption, kohya-style.

    A field with nothing to say leaves no empty tag behind ("imperial, , page 3").
    ``origin``: what the book's IIIF manifest says (``ORIGIN_FIELDS``).
    """
    template = template_for(template, printed, content)
    known = {k: str((origin or {}).get(k) or "") for k in ORIGIN_FIELDS}
    text = check_template(template).format(source=source, page=page, trigger=trigger or "",
                                           printed=printed, content=content, **known)
    text = _EMPTY_TAGS.sub(",", " ".join(text.split())).strip(" ,")
    if trigger and "{trigger}" not in template:
        text = f"{trigger}, {text}" if text else trigger
    return text
