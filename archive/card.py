"""The dataset card (``README.md`` in the zip): what the dataset holds, where each book
came from and on what terms.

Why: a dataset shared without its sources' rights is one nobody may use. A IIIF book
brings its own title, date, attribution and rights (``RegionRecord.origin``); a PDF
brings none, and the card says to check them.
"""

from __future__ import annotations

from archive.records import PageRecord, RegionRecord

SOURCE_FIELDS = ("title", "date", "attribution", "license", "rights", "required_statement",
                 "manifest")


def dataset_card(pages: list[PageRecord], regions: list[RegionRecord]) -> str:
    """Markdown with a YAML header, as the Hugging Face Hub reads a dataset's README."""
    kept = [r for r in regions if r.kept]
    sources = list(dict.fromkeys(p.source for p in pages))
    lines = ["---", "tags:", "- image", "- lora", "- illustrations", "---", "",
             f"# {len(kept)} illustrations from {len(sources)} book(s)", "",
             "Cropped from their pages by Borde's archive tool (`python -m archive`). Each "
             "image has a caption (`.txt`) and a row in `metadata.jsonl`; `manifest.csv` "
             "lists every page read and `regions.csv` every candidate, kept or not.", "",
             "## Sources", ""]
    for source in sources:
        lines += _source(source, [r for r in regions if r.source == source],
                         sum(r.source == source for r in kept))
    return "\n".join(lines) + "\n"


def _source(source: str, regions: list[RegionRecord], kept: int) -> list[str]:
    origin = next((r.origin for r in regions if r.origin), {})
    out = [f"### {_one_line(origin.get('title') or source)}", "",
           f"- source name: `{source}`; {kept} illustration(s)"]
    for key in SOURCE_FIELDS:
        if origin.get(key):
            out.append(f"- {key.replace('_', ' ')}: {_one_line(origin[key])}")
    if not any(origin.get(k) for k in ("license", "rights", "required_statement")):
        out.append("- rights: not stated by the input; check them before sharing this dataset")
    return [*out, ""]


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
