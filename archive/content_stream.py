"""Is this page one scan plus an invisible OCR text layer? Read from its content stream.

A library PDF is a JPEG per page with an OCR text layer in render mode 3 (invisible),
drawn on the page or in a form XObject, as OCRmyPDF, ABBYY and archive.org write it.
Such a page looks exactly like its JPEG, so the reader may decode the scan's own
bytes (at native resolution, at a DCT scale) instead of rendering the page. This
module says where the image lands, and only when everything else in the stream paints
nothing: text shown in render mode 3, state operators and marked content. Anything
else (a path, a second image, visible text, an inline image) answers None, and the
page is rendered as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Strings are replaced before splitting; a name stays a token of its own.
_STRING = re.compile(rb"\((?:[^()\\]|\\.)*\)|<[0-9A-Fa-f\s]*>", re.S)
_TOKEN = re.compile(rb"<<|>>|\[|\]|/[^\s/\[\]()<>{}%]*|[^\s/\[\]()<>{}%]+")
_NUMBER = re.compile(rb"[-+]?(?:\d+\.?\d*|\.\d+)$")
SHOW = {b"Tj", b"TJ", b"'", b'"'}
# Operators that paint nothing by themselves (text state, colour, marked content, ...).
QUIET = {
    b"BT", b"ET", b"Tf", b"Tm", b"Td", b"TD", b"T*", b"TL", b"Tc", b"Tw", b"Tz", b"Ts",
    b"w", b"M", b"j", b"J", b"d", b"ri", b"i", b"g", b"G", b"rg", b"RG", b"k", b"K",
    b"cs", b"CS", b"sc", b"SC", b"scn", b"SCN", b"BMC", b"BDC", b"EMC", b"MP", b"DP",
}
MAX_FORM_DEPTH = 3  # OCRmyPDF draws one form; PyMuPDF's show_pdf_page nests two

Matrix = tuple[float, float, float, float, float, float]


def _mul(m: Matrix, ctm: Matrix) -> Matrix:
    """m x ctm, PDF's row-vector convention."""
    a, b, c, d, e, f = m
    A, B, C, D, E, F = ctm
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D,
            e * A + f * C + E, e * B + f * D + F)


def tokens(contents: bytes) -> list[bytes] | None:
    """The stream's tokens, every string as ``()``; None for one we cannot tell apart."""
    flat = _STRING.sub(b" () ", contents)
    if b"(" in flat.replace(b"()", b"") or b")" in flat.replace(b"()", b""):
        return None  # a nested or broken string: not worth the risk
    return _TOKEN.findall(flat)


def placement(contents: bytes, image: str, form: Callable[[str], bytes | None],
              depth: int = 0) -> tuple[float, float, float, float] | None | bool:
    """Where ``/image Do`` lands (x0, y0, x1, y1 in page space), if all else is invisible.

    ``form(name)`` gives a form XObject's content stream (None if ``name`` is not a
    form). Inside a form (``depth`` > 0) no image may be drawn and the answer is
    True (invisible) or None.
    """
    toks = tokens(contents)
    if toks is None:
        return None
    ctm: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    mode = 0
    stack: list[tuple[Matrix, int]] = []
    operands: list[bytes] = []
    box = None
    for tok in toks:
        if _NUMBER.match(tok) or tok[:1] == b"/" or tok in (b"()", b"[", b"]", b"<<", b">>"):
            operands.append(tok)
            continue
        if tok == b"q":
            stack.append((ctm, mode))
        elif tok == b"Q":
            if not stack:
                return None
            ctm, mode = stack.pop()
        elif tok == b"cm":
            try:
                ctm = _mul(tuple(float(v) for v in operands[-6:]), ctm)  # type: ignore[arg-type]
            except ValueError:
                return None
        elif tok == b"Tr":
            mode = int(float(operands[-1])) if operands and _NUMBER.match(operands[-1]) else -1
        elif tok in SHOW:
            if mode != 3:
                return None
        elif tok == b"Do":
            name = operands[-1][1:].decode("latin-1") if operands else ""
            if name == image and depth == 0 and box is None:
                a, b, c, d, e, f = ctm
                if b or c or a <= 0 or d <= 0:
                    return None
                box = (e, f, e + a, f + d)
            elif depth < MAX_FORM_DEPTH and name != image:
                body = form(name)
                if body is None or placement(body, image, form, depth + 1) is not True:
                    return None
            else:
                return None
        elif tok not in QUIET:
            return None  # a path, a clip, an inline image, a shading: it may paint
        operands = []
    if depth:
        return True
    return box


def has_more_than_image(contents: bytes) -> bool:
    """Cheap pre-check: only streams with text or a second Do need the full reading."""
    return b"BT" in contents or contents.count(b"Do") > 1
