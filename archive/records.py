"""What a run writes about each page and each candidate region, in one place.

``PageRecord`` is a row of ``manifest.csv`` (one per page processed);
``RegionRecord`` a row of ``regions.csv`` (one per candidate, kept or not) and,
when kept, a row of ``metadata.jsonl``. Both travel through the writer's journal,
so a resumed run knows every decision made before the kill.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field, fields

MANIFEST_COLUMNS = [  # ms (wall time) stays last: the one column a rerun changes
    "source", "page", "kept", "figures", "score", "reason", "width", "height", "page_bbox",
    "ms",
]
REGION_COLUMNS = [
    "source", "page", "index", "x0", "y0", "x1", "y1", "score", "kind", "kept", "reason",
    "decision", "file_name", "phash", "finder_reason", "printed_text", "model_caption",
    "turned", "origin",
]
# The ``reason`` of a candidate the curator decided on; ``finder_reason`` keeps the finder's.
CURATOR_REASONS = {"keep": "kept_by_curator", "drop": "dropped_by_curator"}
# Kinds that are pictures (or whole pages); a crop the curator keeps against any other
# verdict of the finder (an ornament, a stamp) is a ``picture`` in ``metadata.jsonl``.
PICTURE_KINDS = ("engraving", "photo", "page")
CURATOR_KIND = "picture"


@dataclass
class PageRecord:
    """One page: kept means it gave at least one dataset item."""

    source: str
    page: int  # 1-based
    kept: bool
    score: float
    reason: str
    width: int
    height: int
    ms: float
    figures: int = 0
    # the printed page inside the scan, fractions of the displayed page ("x0 y0 x1 y1")
    page_bbox: tuple[float, float, float, float] = (0.0, 0.0, 1.0, 1.0)

    def __post_init__(self) -> None:
        self.score, self.kept, self.figures = float(self.score), bool(self.kept), int(self.figures)
        self.page_bbox = tuple(round(float(v), 4) for v in self.page_bbox)  # type: ignore[assignment]

    def manifest_row(self) -> list[str]:
        return [
            self.source, str(self.page), "1" if self.kept else "0", str(self.figures),
            f"{self.score:.4f}", self.reason, str(self.width), str(self.height),
            " ".join(f"{v:.4f}" for v in self.page_bbox), f"{self.ms:.1f}",
        ]


@dataclass
class RegionRecord:
    """One candidate region of a page; ``bbox`` is in fractions of the displayed page.

    ``reason`` says why the finder did not keep it ("" if it did, "duplicate of X"
    if an earlier item was the same); ``decision`` is the curator's keep/drop, which
    wins; ``kept`` is the outcome. ``file_name`` is where its bytes are: ``images/``
    when kept, ``candidates/`` when stored for review, "" when not stored.
    """

    source: str
    page: int
    index: int  # 1-based, in reading order; names the file, so it never changes
    bbox: tuple[float, float, float, float]
    score: float
    kind: str
    kept: bool
    reason: str
    file_name: str = ""
    caption: str = ""
    phash: str = ""
    decision: str = ""
    printed_text: str = ""  # the title or caption printed next to it (archive.printed_text)
    model_caption: str = ""  # what a captioning model says it shows (archive.captioner)
    turned: int = 0  # degrees clockwise its image was turned to stand upright (0 or 90)
    # where a IIIF book's picture came from and under what terms (archive.iiif.book.origin):
    # the book's title, date, attribution and rights, the page's label, the manifest's and
    # the canvas's ids and the image's URL; empty for a PDF
    origin: dict = field(default_factory=dict)

    def __post_init__(self) -> None:  # numpy scalars from the finder would not journal
        self.bbox = tuple(round(float(v), 4) for v in self.bbox)  # type: ignore[assignment]
        self.score, self.kept = float(self.score), bool(self.kept)
        self.page, self.index, self.turned = int(self.page), int(self.index), int(self.turned)

    def region_row(self) -> list[str]:
        return [
            self.source, str(self.page), str(self.index), *(f"{v:.4f}" for v in self.bbox),
            f"{self.score:.4f}", self.kind, "1" if self.kept else "0", self.outcome_reason,
            self.decision, self.file_name, self.phash, self.reason, self.printed_text,
            self.model_caption, str(self.turned),
            json.dumps(self.origin, ensure_ascii=False, sort_keys=True) if self.origin else "",
        ]

    @property
    def outcome_reason(self) -> str:
        """Why the candidate is in or out: the curator's decision wins over the finder."""
        return CURATOR_REASONS.get(self.decision, self.reason)

    @property
    def outcome_kind(self) -> str:
        """What the item is: the curator's keep makes a picture of the finder's ornament."""
        if self.decision == "keep" and self.kind not in PICTURE_KINDS:
            return CURATOR_KIND
        return self.kind

    def metadata(self) -> dict:
        """The ``metadata.jsonl`` row that ``datasets``' imagefolder reads. Every row has the
        same columns: ``kind`` is the item's, ``finder_kind`` the finder's own verdict, and
        ``decided_by`` says whose call kept it (``finder`` or ``curator``)."""
        return {
            "file_name": self.file_name,
            "text": self.caption,
            "source": self.source,
            "page": self.page,
            "bbox": list(self.bbox),
            "score": round(self.score, 4),
            "kind": self.outcome_kind,
            "finder_kind": self.kind,
            "decided_by": "curator" if self.decision else "finder",
            "printed_text": self.printed_text,
            "model_caption": self.model_caption,
            "turned": self.turned,
            **({"origin": self.origin} if self.origin else {}),
        }


KEPT_DIR, CANDIDATE_DIR = "images/", "candidates/"


def item_name(source: str, page: int, index: int | None, folder: str = KEPT_DIR) -> str:
    """``images/<stem>_p00012_f1.jpg`` for a figure, ``images/<stem>_p00012.jpg`` for a page."""
    suffix = "" if index is None else f"_f{index}"
    return f"{folder}{source}_p{page:05d}{suffix}.jpg"


def moved(file_name: str, folder: str) -> str:
    """The same item's name in another folder (kept <-> candidate)."""
    return folder + file_name.split("/", 1)[1]


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def page_bbox(text: str | None) -> tuple[float, float, float, float]:
    """A manifest's ``page_bbox`` cell read back; a manifest from before it had none."""
    values = tuple(float(v) for v in (text or "").split())
    return values if len(values) == 4 else (0.0, 0.0, 1.0, 1.0)  # type: ignore[return-value]


def manifest_csv(records: list[PageRecord]) -> bytes:
    return _csv(MANIFEST_COLUMNS, [r.manifest_row() for r in records])


def regions_csv(regions: list[RegionRecord]) -> bytes:
    return _csv(REGION_COLUMNS, [r.region_row() for r in regions])


def metadata_jsonl(regions: list[RegionRecord]) -> bytes:
    rows = (json.dumps(r.metadata(), ensure_ascii=False) + "\n" for r in regions if r.kept)
    return "".join(rows).encode("utf-8")


def journal_line(page: PageRecord, regions: list[RegionRecord]) -> str:
    return json.dumps({"page": asdict(page), "regions": [asdict(r) for r in regions]},
                      ensure_ascii=False) + "\n"


_PAGE_FIELDS = {f.name for f in fields(PageRecord)}
_REGION_FIELDS = {f.name for f in fields(RegionRecord)}


def parse_journal_line(line: str) -> tuple[PageRecord, list[RegionRecord]]:
    """Inverse of ``journal_line``; raises ValueError/TypeError/KeyError on a bad line."""
    row = json.loads(line)
    page = PageRecord(**{k: v for k, v in row["page"].items() if k in _PAGE_FIELDS})
    regions = [RegionRecord(**{k: v for k, v in r.items() if k in _REGION_FIELDS})
               for r in row["regions"]]
    return page, regions
