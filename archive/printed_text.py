"""The printed words that belong to a picture: its caption or legend below, its title above.

Most library PDFs carry an OCR text layer, and the line printed next to an engraving
says what it shows ("Fig. 41. Wassermühle", "EL RATON DE CANARIAS"), which no model
can guess. The words come from the text layer (``page.get_text("words")``) or from
``archive.ocr``; either way they are grouped into lines here by geometry alone, and a
line belongs to a picture when it overlaps it horizontally and sits just above or just
below it. Every distance is measured in the line's own height, so a 150-dpi chapbook
and a 600-dpi folio mean the same. Lines inside the picture (OCR noise read off the
hatching), lines of a column beside it and lines that are only a number ("Núm. 23",
"Fig. 4.", a page number) never count.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# A title or caption starts within this many of its own line heights of the picture.
MAX_GAP = 3.0
# A caption goes on to the next line when the gap between them is at most this.
LINE_GAP = 1.0
MAX_LINES = 3  # per side: a legend, not the article under it
MAX_CHARS = 240  # SDXL's text encoders read 77 tokens; the trigger and a model caption come first
WORD_GAP = 1.5  # words further apart than this many line heights are in different columns
EDGE = 0.5  # a line whose middle is at most this many heights inside the box still counts
OVERLAP = 0.1  # of the narrower of line and picture: a title centred under two pictures
SMALLER = 0.6  # a next line this much smaller than the first is the text, not the caption

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Word:
    """One word and its box, in any unit as long as the picture boxes use the same."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str


@dataclass
class Line:
    words: list[Word]
    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def height(self) -> float:
        return max(1e-9, self.y1 - self.y0)

    @property
    def middle(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def text(self) -> str:
        return " ".join(w.text for w in sorted(self.words, key=lambda w: w.x0))

    def add(self, w: Word) -> None:
        self.words.append(w)
        self.x0, self.y0 = min(self.x0, w.x0), min(self.y0, w.y0)
        self.x1, self.y1 = max(self.x1, w.x1), max(self.y1, w.y1)


def clean_words(words: Sequence[Word]) -> list[Word]:
    """Words that carry a letter or a digit (an OCR layer also holds '|', '—', '~')."""
    return [w for w in words if any(c.isalnum() for c in w.text) and w.x1 > w.x0
            and w.y1 > w.y0]


def lines_of(words: Sequence[Word]) -> list[Line]:
    """Words joined into lines: side by side on one baseline, with no column gap between."""
    lines: list[Line] = []
    for w in sorted(clean_words(words), key=lambda w: (w.x0, w.y0)):
        best, best_overlap = None, 0.0
        for line in lines:
            h = min(line.height, w.y1 - w.y0)
            overlap = min(line.y1, w.y1) - max(line.y0, w.y0)
            gap = w.x0 - line.x1
            if overlap >= 0.5 * h and -0.5 * line.height <= gap <= WORD_GAP * line.height \
                    and overlap > best_overlap:
                best, best_overlap = line, overlap
        if best is None:
            lines.append(Line([w], w.x0, w.y0, w.x1, w.y1))
        else:
            best.add(w)
    return lines


_LETTERS = re.compile(r"[^\W\d_]{2,}")


def is_number_label(text: str) -> bool:
    """'Núm. 23', '(Número 234.)', 'Fig. 4.', '12': a number with at most one word."""
    return any(c.isdigit() for c in text) and len(_LETTERS.findall(text)) <= 1


def _overlaps(box: Box, line: Line) -> bool:
    """A share of the narrower of the two lies over the other: never a column beside it."""
    overlap = min(box[2], line.x1) - max(box[0], line.x0)
    return overlap > 0 and overlap >= OVERLAP * min(box[2] - box[0], line.x1 - line.x0)


def _side(box: Box, lines: list[Line], below: bool) -> list[Line]:
    """The caption block on one side: the nearest line within MAX_GAP, then its next lines."""
    def gap_to_box(line: Line) -> float:
        return line.y0 - box[3] if below else box[1] - line.y1

    near = [ln for ln in lines if _overlaps(box, ln)
            and (ln.middle >= box[3] - EDGE * ln.height if below
                 else ln.middle <= box[1] + EDGE * ln.height)]
    near.sort(key=lambda ln: ln.middle if below else -ln.middle)
    block: list[Line] = []
    for ln in near:
        if not block:
            if gap_to_box(ln) > MAX_GAP * ln.height:
                return []
            if is_number_label(ln.text):
                continue  # a number just above the picture: the next line may be its title
            block.append(ln)
            continue
        last = block[-1]
        gap = ln.y0 - last.y1 if below else last.y0 - ln.y1
        if last.y0 <= ln.middle <= last.y1:
            continue  # a column beside the block's last line, on the same row
        if gap > LINE_GAP * max(last.height, ln.height) or ln.height < SMALLER * block[0].height:
            break
        if not is_number_label(ln.text):
            block.append(ln)
        if len(block) == MAX_LINES:
            break
    return block if below else block[::-1]


def join_lines(lines: Sequence[Line], limit: int = MAX_CHARS) -> str:
    """The lines as one caption: a word broken at a line end is joined, the length capped."""
    text = ""
    for line in lines:
        part = line.text
        if text.endswith("-") and part[:1].islower():
            text = text[:-1] + part
        else:
            text = f"{text} {part}" if text else part
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0]
    return text.strip(" ,;:")


def printed_for(box: Box, lines: list[Line]) -> str:
    """The title above and the caption below ``box``, or "" when the page prints none."""
    return join_lines(_side(box, lines, below=False) + _side(box, lines, below=True))


def printed_texts(boxes: Sequence[Box], words: Sequence[Word]) -> list[str]:
    """One printed text per box; the page's lines are grouped once for all of them."""
    if not words:
        return ["" for _ in boxes]
    lines = lines_of(words)
    return [printed_for(box, lines) for box in boxes]


def text_layer_words(page) -> list[Word]:
    """The PDF's own words on ``page`` (a ``pymupdf.Page``), in fractions of the page as shown.

    A page with no text layer gives []. MuPDF reports the words on the unrotated page;
    they are turned by the page's /Rotate into the frame the figure boxes are in.
    """
    try:
        raw = page.get_text("words")
        rect, turn = page.rect, page.rotation_matrix
    except Exception:  # noqa: BLE001 - a broken text layer is no text layer, never a bad page
        return []
    w, h = rect.width, rect.height
    if not raw or w <= 0 or h <= 0:
        return []
    out = []
    for x0, y0, x1, y1, text, *_ in raw:
        box = (type(rect)(x0, y0, x1, y1) * turn).normalize()  # unrotated -> as shown
        out.append(Word((box.x0 - rect.x0) / w, (box.y0 - rect.y0) / h,
                        (box.x1 - rect.x0) / w, (box.y1 - rect.y0) / h, text))
    return out


def quarter_turned(box: Box) -> Box:
    """A box in fractions of a page as shown, in fractions of that page turned a quarter
    clockwise: where it stands on a page printed across the book, read upright."""
    x0, y0, x1, y1 = box
    return (1.0 - y1, x0, 1.0 - y0, x1)


def words_quarter_turned(words: Sequence[Word]) -> list[Word]:
    """Words in fractions of a page as shown, on that page turned a quarter clockwise
    (``quarter_turned``): the lines of a page printed across the book run across again."""
    return [Word(*quarter_turned((w.x0, w.y0, w.x1, w.y1)), w.text) for w in words]


def scaled(words: Sequence[Word], width: float, height: float) -> list[Word]:
    """Words from page fractions to pixels, so line heights and column gaps compare."""
    return [Word(w.x0 * width, w.y0 * height, w.x1 * width, w.y1 * height, w.text)
            for w in words]
