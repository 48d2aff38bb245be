"""``python -m vet PHOTO [PHOTO ...] [--json] [--model DIR_OR_HUB_ID]``.

A herd run loads the model once (``keep`` policy) rather than per photo; pass
``--policy release`` to mimic the Space's per-request loading.
"""

from __future__ import annotations

import argparse
import json
import sys

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


def _table(rows: list, lang: str) -> str:
    """A readable table: notifiable suspicions first, with a banner line above them."""
    from vet.ui import herd_order, notifiable, why_uncertain

    head = ["file", "status", "species", "condition", "conf", "urgency", "why uncertain",
            "top-3"]
    ordered = herd_order(rows)
    body = []
    for t in ordered:
        top = ", ".join(f"{d['label']} {d['p']:.0%}" for d in t.top)
        conf = f"{t.confidence:.0%}" if t.confidence is not None else "-"
        body.append([("!! " if notifiable(t) else "") + t.file, t.status, t.species or "-",
                     t.condition or "-", conf, t.urgency or "-",
                     why_uncertain(t, lang) or "-", top or (t.reason or "-")])
    widths = [min(48, max(len(h), *(len(r[i]) for r in body))) for i, h in enumerate(head)]
    lines = []
    hits = [t for t in ordered if notifiable(t)]
    if hits:
        lines.append(f"!! NOTIFIABLE DISEASE SUSPECTED in {len(hits)} photo(s): isolate, stop all "
                     "animal movement, call the official veterinarian"
                     if lang == "en" else
                     f"!! POSIBLE ENFERMEDAD DE DECLARACIÓN OBLIGATORIA en {len(hits)} foto(s): "
                     "aísle, detenga todo movimiento de animales, llame al veterinario oficial")
    lines.append("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    lines += ["  ".join(str(c)[-w:].ljust(w) if i == 0 else str(c).ljust(w)
                        for i, (c, w) in enumerate(zip(r, widths, strict=True))) for r in body]
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
