"""``python -m archive INPUT.pdf [MORE.pdf ...] -o OUT.zip``: the curator's command."""

from __future__ import annotations

import argparse
import signal
import sys

from tqdm import tqdm

from archive.caption import DEFAULT_CAPTION
from archive.decisions import load as load_decisions
from archive.errors import ArchiveError
from archive.filter import FILTER_NAMES
from archive.pipeline import UNITS, iter_build
from archive.report import text_histogram
from archive.resize import RESIZE_MODES


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m archive",
        description="Stream scanned PDFs, or books a library serves through IIIF, into a zip "
                    "dataset of their illustrations: every engraving or plate cropped from its "
                    "page, de-duplicated and captioned.",
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="a scanned PDF, or a IIIF manifest or collection (its https:// address "
                        "or a .json file): each page is fetched small, and only the pictures' "
                        "own regions at full size")
    p.add_argument("-o", "--out", required=True, metavar="OUT.zip")
    p.add_argument("--unit", default="figure", choices=UNITS,
                   help="dataset item: each figure cropped from its page (default), or whole "
                        "pages kept by the page filter")
    p.add_argument("--filter", default="figures", choices=(*FILTER_NAMES, "default"),
                   help="page filter for --unit page: 'figures' keeps pages where the figure "
                        "finder keeps a picture (default); 'layout' a model of page layout; "
                        "'std' the seed's grayscale-std rule")
    p.add_argument("--threshold", type=float, default=None,
                   help="keep figures (or pages) scoring at least this (default: the finder's "
                        "or filter's own)")
    p.add_argument("--min-figure-area", type=float, default=None,
                   help="drop figures smaller than this share of the page (0-1); with --unit "
                        "page, pages whose largest figure is smaller")
    p.add_argument("--size", type=int, default=1024,
                   help="output side (square modes) or the side of a bucket's area")
    p.add_argument("--resize", default=None, choices=RESIZE_MODES,
                   help="bucket: keep the aspect ratio in an SDXL bucket (default for figures); "
                        "pad: a square on the paper colour (default for pages); crop; stretch")
    p.add_argument("--quality", type=int, default=92)
    p.add_argument("--pages", default=None, help="pages to process, e.g. 1-500,600,700-")
    p.add_argument("--workers", type=int, default=None,
                   help="processes over page ranges (default 1; with --ray local, the CPUs "
                        "Ray may use, default all)")
    p.add_argument("--caption", default=DEFAULT_CAPTION,
                   help="caption template; fields {source} {page} {trigger} {printed} {content}"
                        " (default: '{trigger}, {printed}' where the page prints a title or "
                        "caption next to the figure, else 'an engraving from {source}, page "
                        "{page}'; with --captioner '{trigger}, {content}[, {printed}]')")
    p.add_argument("--no-printed-text", action="store_true",
                   help="do not read the title or caption printed next to each figure from "
                        "the PDF's text layer")
    p.add_argument("--ocr", default=None, metavar="LANG",
                   help="read it with Tesseract (e.g. spa, eng, spa+eng) on pages without a "
                        "text layer: only pages with a kept figure, only the bands around it")
    p.add_argument("--captioner", nargs="?", const=None, default=False, metavar="MODEL",
                   help="after the build, caption each kept crop with a vision-language model "
                        "(a Hub id or local folder; default BORDE_CAPTIONER or "
                        "Salesforce/blip-image-captioning-base)")
    p.add_argument("--trigger", default=None, help="trigger word that leads every caption")
    p.add_argument("--keep-duplicates", action="store_true",
                   help="keep near-duplicate figures (reprinted plates, repeated scans)")
    p.add_argument("--no-candidates", action="store_true",
                   help="do not keep the doubtful crops in candidates/ for review "
                        "(python -m archive.review)")
    p.add_argument("--decisions", default=None, metavar="regions.csv",
                   help="the curator's keep/drop decisions (an edited regions.csv); by default "
                        "OUT.decisions.csv is read when it exists")
    p.add_argument("--scale", type=float, default=2.0, help="render zoom for non-scan pages")
    p.add_argument("--password", default=None, help="password of an encrypted PDF")
    p.add_argument("--resume", action="store_true", help="continue an interrupted OUT.zip.partial")
    p.add_argument("--overwrite", action="store_true", help="replace an existing OUT.zip")
    p.add_argument("--scan-only", action="store_true",
                   help="write only the manifest and print a score histogram")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="local|auto|ADDRESS",
                   help="build on Ray into the folder -o as part-NNNNN.zip: 'local' starts Ray "
                        "here, 'auto' or an address joins a cluster (see README, Scale out)")
    p.add_argument("--part-pages", type=int, default=None,
                   help="with --ray: pages per part and per task (default 200)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if hasattr(signal, "SIGXFSZ"):
        # Past a file-size limit, get an error we can explain instead of being killed.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    options = dict(
        unit=args.unit, filter=args.filter, threshold=args.threshold,
        min_figure_area=args.min_figure_area, keep_duplicates=args.keep_duplicates,
        candidates=not args.no_candidates,
        size=args.size, resize=args.resize, quality=args.quality, pages=args.pages,
        workers=args.workers, caption=args.caption, trigger=args.trigger, resume=args.resume,
        password=args.password, scan_only=args.scan_only, scale=args.scale,
        overwrite=args.overwrite, printed_text=not args.no_printed_text, ocr=args.ocr,
    )
    if args.captioner is not False and (args.ray is not None or args.scan_only):
        print("error: --captioner runs after a single-machine build; caption a collection's "
              "parts with python -m archive.captioner DATASET/part-*.zip", file=sys.stderr)
        return 2
    if args.ray is not None:  # imports Ray only now, and only this path
        from archive import distributor

        return distributor.main(args.inputs, args.out, args.ray, args.part_pages, options)
    if args.part_pages is not None:
        print("error: --part-pages is for --ray", file=sys.stderr)
        return 2
    if args.workers is None:
        options["workers"] = 1
    bar = None
    told = 0
    try:
        if args.decisions:
            options["decisions"] = load_decisions(args.decisions)
        gen = iter_build(args.inputs, args.out, **options)
        while True:
            try:
                event = next(gen)
            except StopIteration as stop:
                report = stop.value
                break
            if bar is None:
                bar = tqdm(total=event.total, initial=event.done - 1, unit="page",
                           desc="scanning" if args.scan_only else "building")
            bar.update(1)
            for note in event.notes:
                bar.write(f"warning: {note}", file=sys.stderr)
            told += len(event.notes)
            if args.unit == "figure":
                bar.set_postfix(figures=event.items, pages=event.kept, refresh=False)
            else:
                bar.set_postfix(kept=event.kept, refresh=False)
    except ArchiveError as exc:
        if bar is not None:
            bar.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"interrupted: the pages done so far are kept in {args.out}.partial; "
              "run the same command with --resume to continue", file=sys.stderr)
        return 130
    if bar is not None:
        bar.close()
    for note in report.notes[told:]:
        print(f"warning: {note}", file=sys.stderr)
    if args.scan_only:
        print(text_histogram(report.scores, report.threshold))
    print(report.summary())
    if args.captioner is not False:
        return _caption(report.out, args.captioner)
    return 0


def _caption(out, model: str | None) -> int:
    """The captioning pass over the finished zip; a failure leaves the zip as built."""
    from archive import captioner

    model = model or captioner.DEFAULT_MODEL
    with tqdm(unit="crop", desc=f"captioning ({model})") as bar:
        report = captioner.caption_dataset(out, model, progress=bar.update)
    if report.error:
        print(f"warning: {report.error}", file=sys.stderr)
        return 0
    print(report.summary())
    return 0
