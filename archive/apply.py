"""``python -m archive.apply DATASET.zip regions.csv -o CURATED.zip``: the curator's choice.

The build kept every doubtful crop at output size in ``candidates/``, so a decision
moves bytes between ``images/`` and ``candidates/`` and decodes nothing. The pages
are replayed through the build's own steps (``decide``, ``settle_page``, ``dedupe``,
``place``, ``DatasetWriter``), so the curated zip is byte for byte what a build with
the same decisions (``python -m archive ... --decisions regions.csv``) writes.
The decisions are also saved beside both zips, so a re-run or ``--resume`` keeps them.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

from archive import decisions as dec
from archive.dedup import Deduper
from archive.errors import ArchiveError
from archive.pipeline import Item, dedupe, place, settle_page
from archive.records import PageRecord, RegionRecord, page_bbox
from archive.writer import INFO_NAME, DatasetWriter


@dataclass
class Dataset:
    """A built dataset zip, read back: its pages, its candidates and how it was built."""

    path: Path
    pages: list[PageRecord]
    regions: list[RegionRecord]
    info: dict

    @property
    def threshold(self) -> float:
        return float(self.info.get("threshold", 0.5))


def read_dataset(path: str | Path) -> Dataset:
    """The rows of ``manifest.csv``, ``regions.csv`` and ``build.json``, with captions."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
            missing = {"manifest.csv", "regions.csv", INFO_NAME} - names
            if missing:
                raise ArchiveError(f"{path.name} is not a dataset zip of this version "
                                   f"(no {', '.join(sorted(missing))}); build it again",
                                   code="dataset_old", name=path.name)
            pages = [_page(r) for r in _rows(zf, "manifest.csv")]
            regions = [_region(r) for r in _rows(zf, "regions.csv")]
            for r in regions:
                txt = r.file_name.rsplit(".", 1)[0] + ".txt"
                if r.file_name and txt in names:
                    r.caption = zf.read(txt).decode("utf-8")
            info = json.loads(zf.read(INFO_NAME))
    except (OSError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ArchiveError(f"cannot read dataset {path}: {exc}", code="dataset_unreadable",
                           name=path.name) from None
    return Dataset(path, pages, regions, info)


def _rows(zf: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(zf.read(name).decode("utf-8"))))


def _page(r: dict[str, str]) -> PageRecord:
    return PageRecord(r["source"], int(r["page"]), r["kept"] == "1", float(r["score"]),
                      r["reason"], int(r["width"]), int(r["height"]), float(r["ms"]),
                      int(r["figures"]), page_bbox(r.get("page_bbox")))


def _region(r: dict[str, str]) -> RegionRecord:
    box = tuple(float(r[k]) for k in ("x0", "y0", "x1", "y1"))
    return RegionRecord(r["source"], int(r["page"]), int(r["index"]), box, float(r["score"]),
                        r["kind"], r["kept"] == "1", r.get("finder_reason", r["reason"]),
                        r["file_name"], "", r["phash"], r["decision"],
                        r.get("printed_text", ""), r.get("model_caption", ""),
                        int(r.get("turned") or 0), json.loads(r.get("origin") or "{}"))


def replay(
    data: Dataset,
    decisions: dict[dec.Key, str],
    seen: Deduper | None = None,
    keep_duplicates: bool | None = None,
) -> list[tuple[PageRecord, list[Item]]]:
    """Every page again, as the build decides it with ``decisions``; bytes not yet read.

    ``seen`` carries de-duplication across zips (the parts of a collection, in order);
    ``keep_duplicates`` overrides the build's own (a part is built keeping them all).
    """
    by_page: dict[tuple[str, int], list[RegionRecord]] = {}
    for r in data.regions:
        by_page.setdefault((r.source, r.page), []).append(r)
    unit = data.info.get("unit", "figure")
    keep_dups = bool(data.info.get("keep_duplicates")) if keep_duplicates is None \
        else keep_duplicates
    seen = Deduper() if seen is None else seen
    out = []
    for page in data.pages:
        items = []
        for r in by_page.get((page.source, page.page), []):
            fresh = RegionRecord(r.source, r.page, r.index, r.bbox, r.score, r.kind,
                                 dec.auto_kept(r), _auto_reason(r), r.file_name, r.caption,
                                 r.phash, printed_text=r.printed_text,
                                 model_caption=r.model_caption, turned=r.turned,
                                 origin=dict(r.origin))
            dec.decide(fresh, decisions)
            if fresh.kept and not fresh.file_name:
                raise ArchiveError(
                    f"{r.source} page {r.page} #{r.index} was not kept for review (score "
                    f"{r.score:.2f} is under the floor); build again with --decisions",
                    code="not_stored", page=r.page, index=r.index)
            items.append(Item(fresh))
        record = PageRecord(page.source, page.page, False, page.score, page.reason,
                            page.width, page.height, page.ms, page_bbox=page.page_bbox)
        if not math.isnan(page.score):
            settle_page(record, [it.region for it in items], unit)
        dedupe(record, items, seen, keep_dups)
        out.append((record, items))
    return out


def _auto_reason(r: RegionRecord) -> str:
    return "" if r.reason.startswith(dec.DUPLICATE) else r.reason


def write_replayed(data: Dataset, pages: list[tuple[PageRecord, list[Item]]], out: Path,
                   info: dict, overwrite: bool = False) -> tuple[Path, int]:
    """Write replayed pages to ``out`` with the bytes stored in ``data``'s zip."""
    writer = DatasetWriter(out, overwrite=overwrite, info=info)
    try:
        with zipfile.ZipFile(data.path) as src:
            for record, items in pages:
                for it in items:
                    if it.region.file_name:
                        it.jpeg = src.read(it.region.file_name)
                place(items, bool(info.get("candidates", True)))
                writer.add(record, [(it.region, it.jpeg) for it in items])
        final = writer.close()
    except BaseException:
        writer.abort()
        writer.partial.unlink(missing_ok=True)
        raise
    return final, sum(r.kept for r in writer.regions)


def apply(dataset: str | Path, choices: dict[dec.Key, str], out: str | Path,
          overwrite: bool = False) -> tuple[Path, int]:
    """Write the curated zip; returns it and how many items it holds."""
    data = read_dataset(dataset)
    out = Path(out)
    if out.resolve() == data.path.resolve():
        raise ArchiveError("write the curated zip under another name (-o)", code="same_name")
    final, items = write_replayed(data, replay(data, choices), out, data.info, overwrite)
    for target in (dec.sidecar(data.path), dec.sidecar(out)):
        dec.save(target, choices)
    return final, items


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m archive.apply",
        description="Write the curated dataset from a reviewed regions.csv, in seconds: no "
                    "page is decoded again.")
    p.add_argument("dataset", metavar="DATASET.zip")
    p.add_argument("regions", metavar="regions.csv",
                   help="the edited regions.csv (from review.html or the tab), or a "
                        "decisions file with source,page,index,decision")
    p.add_argument("-o", "--out", required=True, metavar="CURATED.zip")
    p.add_argument("--overwrite", action="store_true", help="replace an existing CURATED.zip")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    try:
        out, items = apply(args.dataset, dec.load(args.regions), args.out, args.overwrite)
    except ArchiveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{items} item(s) -> {out} in {time.perf_counter() - t0:.1f} s; decisions saved "
          f"beside it ({dec.sidecar(out).name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
