"""``python -m archive.review DATASET.zip``: a contact sheet to keep or drop the crops.

No filter is right on every page of a scan it has never seen, and a curator sees at
a glance which crops are engravings and which are an ornament, a stain or a column
of text. ``review.html`` (next to the zip) is one self-contained file that opens in
any browser with no network: the doubtful candidates come first (those whose score
is nearest the threshold), each duplicate under its original; a checkbox keeps or
drops each crop; "Export regions.csv" saves the choice for ``python -m archive.apply``.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import sys
import zipfile
from pathlib import Path

from PIL import Image

from archive.apply import Dataset, read_dataset
from archive.decisions import DUPLICATE
from archive.errors import ArchiveError
from archive.figures import reason_words
from archive.records import REGION_COLUMNS, RegionRecord

THUMB_SIDE = 200


def by_doubt(regions: list[RegionRecord], threshold: float) -> list[RegionRecord]:
    """Stored candidates, nearest the threshold first, each duplicate under its original."""
    stored = [r for r in regions if r.file_name]
    dups: dict[str, list[RegionRecord]] = {}
    for r in stored:
        if r.reason.startswith(DUPLICATE):
            dups.setdefault(r.reason[len(DUPLICATE):], []).append(r)
    firsts = [r for r in stored if not r.reason.startswith(DUPLICATE)]
    firsts.sort(key=lambda r: (abs(r.score - threshold), r.source, r.page, r.index))
    out: list[RegionRecord] = []
    for r in firsts:
        out.append(r)
        out.extend(dups.pop(r.file_name, []))
    for rest in dups.values():  # an original no longer stored: still show its copies
        out.extend(rest)
    return out


def thumbnail(data: bytes, side: int = THUMB_SIDE) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.draft("RGB", (side, side))
    img = img.convert("RGB")
    img.thumbnail((side, side), Image.Resampling.BILINEAR)
    return img


def _data_uri(img: Image.Image) -> str:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _card(r: RegionRecord, uri: str) -> str:
    dup = r.reason.startswith(DUPLICATE)
    why = reason_words(r.reason) or ("kept by the curator" if r.decision == "keep" else "kept")
    if r.decision == "drop":
        why = f"dropped by the curator ({reason_words(r.reason) or 'kept by the finder'})"
    key = f"{r.source}|{r.page}|{r.index}"
    cls = "card" + (" kept" if r.kept else " dropped") + (" dup" if dup else "")
    return (
        f'<label class="{cls}" data-key="{html.escape(key)}">'
        f'<img src="{uri}" alt="{html.escape(r.file_name)}" loading="lazy">'
        f'<span><input type="checkbox"{" checked" if r.kept else ""}> keep</span>'
        f'<small>{html.escape(r.source)} p.{r.page} #{r.index} · {r.kind} · '
        f'score {r.score:.2f}</small><small class="why">{html.escape(why)}</small>'
        + "".join(f'<small class="{cls}">{html.escape(text)}</small>'
                  for cls, text in (("printed", r.printed_text), ("model", r.model_caption))
                  if text)
        + "</label>"
    )


def render(data: Dataset, cards: list[tuple[RegionRecord, str]]) -> str:
    """The whole page: styles, cards, the regions rows and the export script, inline."""
    rows = [REGION_COLUMNS] + [r.region_row() for r in data.regions]
    payload = json.dumps(rows, ensure_ascii=True).replace("</", "<\\/")
    kept = sum(r.kept for r in data.regions)
    body = "\n".join(_card(r, uri) for r, uri in cards)
    return _PAGE.format(
        title=html.escape(data.path.name), n=len(cards), kept=kept,
        threshold=f"{data.threshold:.2f}", cards=body, rows=payload,
    )


def write_review(dataset: str | Path, out: str | Path | None = None,
                 limit: int | None = None) -> Path:
    """Write ``review.html`` beside the dataset (or at ``out``); returns its path."""
    data = read_dataset(dataset)
    target = Path(out) if out else data.path.with_name("review.html")
    order = by_doubt(data.regions, data.threshold)[: limit or None]
    try:
        with zipfile.ZipFile(data.path) as zf:
            cards = [(r, _data_uri(thumbnail(zf.read(r.file_name)))) for r in order]
        target.write_text(render(data, cards), encoding="utf-8")
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        raise ArchiveError(f"cannot write {target}: {exc}", code="write_failed") from None
    return target


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m archive.review",
        description="Write review.html: a self-contained contact sheet of the dataset's crops, "
                    "doubtful ones first, to keep or drop them and export regions.csv.")
    p.add_argument("dataset", metavar="DATASET.zip")
    p.add_argument("-o", "--out", default=None, help="where to write (default: review.html "
                   "beside the zip)")
    p.add_argument("--limit", type=int, default=None, help="show only the N most doubtful")
    args = p.parse_args(argv)
    try:
        out = write_review(args.dataset, args.out, args.limit)
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{out}: open it in a browser, tick or untick crops, then Export regions.csv and "
          f"run: python -m archive.apply {args.dataset} regions.csv -o curated.zip")
    return 0


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Review {title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 1rem; background: #f6f1e4; color: #2b2418; }}
header {{ position: sticky; top: 0; background: #f6f1e4; padding: .5rem 0; z-index: 1; }}
button {{ font-size: 1rem; padding: .4rem .9rem; }}
#sheet {{ display: grid; grid-template-columns: repeat(auto-fill, minmax(210px, 1fr));
  gap: .6rem; }}
.card {{ display: flex; flex-direction: column; gap: .2rem; padding: .4rem; background: #fff;
  border: 4px solid #3c8d3c; border-radius: 6px; cursor: pointer; }}
.card img {{ max-width: 100%; max-height: 200px; object-fit: contain; }}
.card.dropped {{ border-color: #b33; opacity: .55; }}
.card.dropped img {{ filter: grayscale(1); }}
.card.dup {{ margin-left: 1.2rem; border-style: dashed; }}
.why {{ color: #6b5d45; }}
.printed {{ font-style: italic; }}
.model {{ color: #35506b; }}
</style></head><body>
<header><h1>Review {title}</h1>
<p>{n} crop(s), the most doubtful first (threshold {threshold}); {kept} kept now. Tick to
keep, untick to drop, then export and run <code>python -m archive.apply</code>.</p>
<button id="export">Export regions.csv</button> <span id="count"></span></header>
<main id="sheet">
{cards}
</main>
<script type="application/json" id="rows">{rows}</script>
<script>
const rows = JSON.parse(document.getElementById("rows").textContent);
const head = rows[0], col = n => head.indexOf(n);
const [S, P, I, K, D] = ["source", "page", "index", "kept", "decision"].map(col);
const byKey = new Map(rows.slice(1).map(r => [r[S] + "|" + r[P] + "|" + r[I], r]));
const original = new Map([...byKey].map(([k, r]) => [k, [r[K] === "1", r[D]]]));
function count() {{
  const kept = [...document.querySelectorAll(".card input")].filter(c => c.checked).length;
  document.getElementById("count").textContent = kept + " of the shown crops kept";
}}
document.querySelectorAll(".card").forEach(card => {{
  const box = card.querySelector("input");
  box.addEventListener("change", () => {{
    card.classList.toggle("kept", box.checked);
    card.classList.toggle("dropped", !box.checked);
    const row = byKey.get(card.dataset.key), [wasKept, wasDecided] = original.get(card.dataset.key);
    row[D] = box.checked === wasKept ? wasDecided : (box.checked ? "keep" : "drop");
    row[K] = box.checked ? "1" : "0";
    count();
  }});
}});
function csv(v) {{ return /[",\\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v; }}
document.getElementById("export").addEventListener("click", () => {{
  const text = rows.map(r => r.map(csv).join(",")).join("\\n") + "\\n";
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], {{type: "text/csv"}}));
  a.download = "regions.csv";
  document.body.appendChild(a); a.click(); a.remove();
}});
count();
</script></body></html>
"""


if __name__ == "__main__":
    raise SystemExit(main())
