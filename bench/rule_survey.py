"""Where the finder's page-level rules fire on pages they must leave alone.

    python -m bench.rule_survey [--changes]

The colour-chart run (``verdicts.patch_run_over``) must make no printed picture a chart,
and the turned-page test (``figures._sideways``) must take no upright page for one
printed across the book; the skew fit (``figures._skew``) is counted too, for a page
read level is read again. All are read on every upright page of the shared sets: the
early books and the chapbooks (with ``--changes``, also scanned the 15 other ways of
``bench.figure_robustness``, turned pages left out), the composites, the library-scan
composites, and the DTA, OCR-D and ufal pages. Printed: the pages looked at, the boxes
the chart run was asked of and made charts, the looks the turned-page test was asked of
and said turned, those the skew fit read askew, each of those named. Test use only.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Iterator

from PIL import Image
from tqdm import tqdm

from archive.figures import finder as F
from archive.figures import verdicts as V
from bench import composites, scans
from bench import figure_robustness as R
from bench.figure_eval import DATA, early_pages, labelled_pages, load_preview, moreno_pages


def upright_pages(changes: bool) -> Iterator[tuple[str, Image.Image]]:
    """(name, preview) of every upright page of the shared sets."""
    ways = [n for n in R.CHANGES if n != "turned a quarter"] if changes else ["as published"]
    for page in early_pages() + moreno_pages():
        data = (DATA / page.name).read_bytes()
        for way in ways:
            yield f"{way}: {page.name}", R.scan_preview(R.rescan(data, way))
    for c in composites.build(per_cell=6):
        yield c.name, c.preview()
    for sc in scans.build():
        yield sc.name, sc.preview()
    for source, _label, path in labelled_pages():
        yield f"{source}: {path.name}", load_preview(path)


def survey(pages: Iterator[tuple[str, Image.Image]]) -> tuple[Counter, list[str]]:
    """Counts of what each rule was asked and said, and the names of what it said."""
    counts: Counter = Counter()
    said: list[str] = []
    now = [""]  # the page being looked at

    def watched(rule: Callable, key: str, fired: Callable, words: Callable) -> Callable:
        """``rule`` counted under ``key``: every ask, and every answer ``fired`` by."""
        def seen(*args):
            counts[f"{key} asked"] += 1
            answer = rule(*args)
            if fired(answer):
                counts[f"{key} said"] += 1
                said.append(f"{words(answer, *args)}: {now[0]}")
            return answer
        return seen

    # each rule where the finder looks it up: (its module, its name)
    rules = {(V, "patch_run_over"): ("chart", bool, lambda _hit, box, _ink: f"chart {box}"),
             (F, "_sideways"): ("turned", bool, lambda _hit, _ink: "turned"),
             (F, "_skew"): ("level", lambda angle: abs(angle) >= F.SKEW_LEVEL,
                            lambda angle, _ink: f"levelled by {angle:g} degrees")}
    shipped = {where: getattr(*where) for where in rules}
    for (module, name), (key, fired, words) in rules.items():
        setattr(module, name, watched(shipped[module, name], key, fired, words))
    try:
        for now[0], preview in pages:
            counts["pages"] += 1
            F.find(preview)
    finally:
        for (module, name), rule in shipped.items():
            setattr(module, name, rule)
    return counts, said


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--changes", action="store_true",
                    help="the early books and chapbooks scanned the other ways too")
    args = ap.parse_args()
    counts, said = survey(tqdm(upright_pages(args.changes), desc="pages", leave=False))
    print(f"upright pages looked at: {counts['pages']}")
    print(f"  colour-chart run: asked of {counts['chart asked']} boxes, made "
          f"{counts['chart said']} a chart")
    print(f"  turned-page test: asked of {counts['turned asked']} looks (those with a "
          f"candidate), said turned {counts['turned said']}")
    print(f"  skew fit: asked of {counts['level asked']} looks (those not turned), read "
          f"{counts['level said']} askew by {F.SKEW_LEVEL:g} degrees or more (those are "
          "read level: as published, a page may lie so)")
    for line in said:
        print("   ", line)


if __name__ == "__main__":
    main()
