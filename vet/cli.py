"""``python -m vet PHOTO [PHOTO ...] [--json] [--model DIR_OR_HUB_ID]``.

A herd run loads the model once (``keep`` policy) rather than per photo; pass
``--policy release`` to mimic the Space's per-request loading.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2, as promised in the docs
        sys.stderr.write(f"vet: {message} (try: python -m vet --help)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m vet", description="Livestock photo triage (screening aid).")
    ap.add_argument("photos", nargs="*", metavar="PHOTO", help="image files")
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    ap.add_argument("--model", default=None, help="model folder or Hub id (default: VET_MODEL "
                                                  "or the shipped vet/model)")
    ap.add_argument("--lang", choices=("en", "es"), default="en", help="advice language")
    ap.add_argument("--policy", choices=("keep", "release"), default="keep",
                    help="load once (keep, default) or per batch (release)")
    ap.add_argument("--batch-size", type=int, default=16)
    return ap


WIDEST = 48  # a column's widest, in characters


def _table(rows: list, lang: str) -> str:
    """A readable table in the answer's language, every word (the UI's own words): notifiable
    suspicions first, under a banner line."""
    from ui_text import say
    from vet.ui import condition_name, herd_order, herd_rows, notifiable, table_headers

    head = table_headers(lang)[:7] + [say(lang, "vet_cli_top3")]
    ordered = herd_order(rows)
    body = []
    for t, row in zip(ordered, herd_rows(rows, lang), strict=True):
        top = ", ".join(f"{condition_name(d['label'], lang)} {d['p']:.0%}" for d in t.top)
        mark = "!! " if notifiable(t) else ""  # kept in front of a long path's end
        body.append([mark + t.file[-(WIDEST - len(mark)):], *row[1:7], top or "-"])
    widths = [min(WIDEST, max(len(h), *(len(r[i]) for r in body))) for i, h in enumerate(head)]
    lines = []
    hits = [t for t in ordered if notifiable(t)]
    if hits:
        lines.append("!! " + say(lang, "vet_herd_alert", n=len(hits),
                                 names=", ".join(Path(t.file).name for t in hits)))
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in body]
    if rows:
        lines.append(rows[0].disclaimer.get(lang, ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not args.photos:
        sys.stderr.write("vet: no PHOTO given (usage: python -m vet PHOTO [PHOTO ...] "
                         "[--json] [--model DIR_OR_HUB_ID])\n")
        return 2
    if args.batch_size < 1:
        sys.stderr.write("vet: --batch-size must be at least 1\n")
        return 2
    from vet.model_io import VetModelError
    from vet.pipeline import triage_many

    results = []
    try:
        chunks = range(0, len(args.photos), args.batch_size)
        for s in tqdm(chunks, desc="triage", unit="batch", disable=len(chunks) < 2,
                      file=sys.stderr):
            part = triage_many(args.photos[s: s + args.batch_size], model=args.model,
                               policy=args.policy, batch_size=args.batch_size)
            results.extend(part)
            if args.json:
                for t in part:
                    sys.stdout.write(json.dumps(t.to_json(), ensure_ascii=False) + "\n")
                sys.stdout.flush()
    except VetModelError as exc:
        sys.stderr.write(f"vet: {exc}\n")
        return 2
    if not args.json:
        print(_table(results, args.lang))
    return 0
