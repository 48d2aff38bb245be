"""Captions from a template that a stranger on a public Space may type.

``str.format`` can walk attributes (``{0.__class__}``) and index into
objects, so a template is checked first: only the named fields below, with
no attribute access, indexing or conversion, are accepted.
"""

from __future__ import annotations

import string

from archive.errors import ArchiveError

DEFAULT_CAPTION = "an engraving from {source}, page {page}"
FIELDS = ("source", "page", "trigger")
MAX_LEN = 500


def check_template(template: str) -> str:
    """The template itself, or an ``ArchiveError`` naming what is not allowed."""
    if len(template) > MAX_LEN:
        raise ArchiveError(f"caption template is longer than {MAX_LEN} characters")
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ArchiveError(f"caption template is malformed: {exc}") from None
    for _literal, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in FIELDS or conversion or (spec and not spec.isdigit()):
            allowed = ", ".join("{" + f + "}" for f in FIELDS)
            raise ArchiveError(f"caption template field {{{field}}} is not allowed; use {allowed}")
    return template


def make_caption(template: str, source: str, page: int, trigger: str | None = None) -> str:
    """Fill a checked template; a trigger word leads the caption, kohya-style."""
    text = check_template(template).format(source=source, page=page, trigger=trigger or "")
    text = " ".join(text.split())
    if trigger and "{trigger}" not in template:
        text = f"{trigger}, {text}"
    return text
