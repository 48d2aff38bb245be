"""What a curator's corrections would teach the finder: refit on the first pages, score the rest.

    python -m bench.figure_refit [--corrections 20] [--decay 0.01]

Issue #61 item 2 asks whether the review's keep/drop decisions, used as labels, improve
the rest of the same book after a refit. This simulates the curator before building it:
for each source and way in (``bench.figure_learned``: published, Otsu, grey, low
contrast, as an image server resamples it), the pages are reviewed in order; on each, the
curator sees what the review tab shows (kept crops, and candidates scored from
``REVIEW_FLOOR`` up that a threshold could keep) and decides each as the truth says. The
review stops after ``--corrections`` decisions that differ from the finder's, or half the
pages. A logistic regression over ``figure_learned``'s candidate features (the rules'
verdict among them), weighed so both classes count alike, is fitted on the reviewed
candidates and decides the shown candidates of the remaining pages; the finder's own
crops on those pages are the comparison. Scored as ``bench.figure_eval`` does (found,
crops that are pictures, text pages with no crop). A book must have 16 pages or more to
be its own unit; every source is also taken whole, as one curator's collection.
"""

from __future__ import annotations

import argparse

import numpy as np

from archive import figures as F
from bench import figure_learned as L
from bench.figure_eval import score

NOT_SHOWN = F.NEVER_KEPT | {"too_small"}  # never a crop, whatever the curator's threshold
MIN_BOOK = 16  # pages: a book shorter than this is too short to learn from its first half


def shown(s: L.Seen) -> np.ndarray:
    """The candidates the review tab shows: kept crops, and doubtful ones."""
    return np.array([r.kept or (r.score >= F.REVIEW_FLOOR and r.reason not in NOT_SHOWN)
                     for r in s.regions], bool)


def refit(pages: list[L.Seen], corrections: int, decay: float) -> dict:
    """Review pages in order until ``corrections`` are made (at most half the pages), fit
    on what was reviewed, and score the rest both ways."""
    xs, ys, made, cut = [], [], 0, 0
    for i, s in enumerate(pages):
        if made >= corrections or i >= len(pages) // 2:
            break
        m = shown(s)
        if m.any():
            xs.append(s.feats[m])
            ys.append(s.labels[m])
            made += int(sum(r.kept != bool(y) for r, y in
                            zip([r for r, k in zip(s.regions, m, strict=True) if k],
                                s.labels[m], strict=True)))
        cut = i + 1
    rest = pages[cut:]
    out = {"reviewed": cut, "corrections": made,
           "rules": score((s.truth, [r.box for r in s.regions if r.kept]) for s in rest)}
    y = np.concatenate(ys) if ys else np.zeros(0)
    if not made or len(set(y.tolist())) < 2:
        out["refit"], out["note"] = out["rules"], "nothing to learn"
        return out
    x = np.concatenate(xs).astype(np.float32)
    n1 = float(y.sum())
    weights = np.where(y == 1, 0.5 / n1, 0.5 / (len(y) - n1))
    predict = L.fit(x, y.astype(np.float32), weights, decay=decay)
    decided = []
    for s in rest:
        m = shown(s)
        cand = [r for r, k in zip(s.regions, m, strict=True) if k]
        p = predict(s.feats[m].astype(np.float32)) if cand else []
        decided.append((s.truth, [r.box for r, q in zip(cand, p, strict=True) if q >= 0.5]))
    out["refit"], out["note"] = score(decided), ""
    return out


def _cell(st: dict) -> str:
    return (f"{100 * st['recall']:.0f}% / {100 * st['precision']:.0f}% / "
            f"{100 * st['text_clean']:.0f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corrections", type=int, default=20)
    ap.add_argument("--decay", type=float, default=1e-2, help="the L2 penalty of the fit")
    args = ap.parse_args()
    seen = L.collect(False, False)
    book = {(src, p.name): p.group for src in L.SOURCES for p in L.PAGES[src]()}
    print("| source | way in | unit | pages | reviewed | corrections | finder: found / crops "
          "that are pictures / clean text pages | refit |")
    print("|---|---|---|---|---|---|---|---|")
    for src in L.SOURCES:
        for way in L.VERSIONS:
            pages = [s for s in seen if s.source == src and s.version == way]
            books: dict[str, list[L.Seen]] = {}
            for s in pages:
                books.setdefault(book[(src, s.name)], []).append(s)
            units = [("the collection", pages)] + [
                (b, ps) for b, ps in books.items() if len(ps) >= MIN_BOOK]
            for name, ps in units:
                r = refit(ps, args.corrections, args.decay)
                print(f"| {src} | {way} | {name} | {len(ps)} | {r['reviewed']} | "
                      f"{r['corrections']} | {_cell(r['rules'])} | "
                      f"{r['note'] or _cell(r['refit'])} |")


if __name__ == "__main__":
    main()
