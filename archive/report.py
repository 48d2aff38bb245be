"""Pictures of a run: the score histogram that tells where to put the threshold."""

from __future__ import annotations

import io

from PIL import Image


def text_histogram(
    scores: list[tuple[float, bool]], threshold: float, bins: int = 20, width: int = 40
) -> str:
    """A terminal histogram of page scores with the threshold marked."""
    if not scores:
        return "(no scored pages)"
    values = [s for s, _ in scores]
    lo, hi = min(values + [threshold]), max(values + [threshold])
    if hi <= lo:
        hi = lo + 1.0
    step = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / step))] += 1
    peak = max(counts)
    lines = []
    for b, c in enumerate(counts):
        left = lo + b * step
        mark = " <- threshold" if left <= threshold < left + step else ""
        bar = "#" * round(width * c / peak) if peak else ""
        lines.append(f"{left:9.3f} | {bar:<{width}} {c:5d}{mark}")
    return "\n".join(lines)


HISTOGRAM_WORDS = {"title": "figure scores", "x": "score", "y": "regions",
                   "kept": "kept", "dropped": "dropped", "threshold": "threshold"}


def histogram_image(
    scores: list[tuple[float, bool]], threshold: float, title: str | None = None,
    words: dict[str, str] | None = None,
) -> Image.Image:
    """Kept and dropped candidates' scores, stacked, with the threshold line.

    ``words`` replaces any of :data:`HISTOGRAM_WORDS` (the UI passes its language);
    each score is one candidate region, so the counts are regions, not pages.
    """
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    w = {**HISTOGRAM_WORDS, **(words or {})}
    fig = Figure(figsize=(6, 3), dpi=100)
    ax = fig.add_subplot()
    kept = [s for s, k in scores if k]
    dropped = [s for s, k in scores if not k]
    ax.hist([dropped, kept], bins=30, stacked=True, color=["#b0a58f", "#5b4a2e"],
            label=[f"{w['dropped']} ({len(dropped)})", f"{w['kept']} ({len(kept)})"])
    ax.axvline(threshold, color="#c0392b", linestyle="--", label=f"{w['threshold']} {threshold:g}")
    ax.set_xlabel(w["x"])
    ax.set_ylabel(w["y"])
    ax.set_title(title or w["title"])
    ax.legend(loc="upper center", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    buf.seek(0)
    return Image.open(buf).convert("RGB")
