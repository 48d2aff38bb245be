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


def histogram_image(
    scores: list[tuple[float, bool]], threshold: float, title: str = "page scores"
) -> Image.Image:
    """Kept and dropped pages' scores, stacked, with the threshold line."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 3), dpi=100)
    ax = fig.add_subplot()
    kept = [s for s, k in scores if k]
    dropped = [s for s, k in scores if not k]
    ax.hist([dropped, kept], bins=30, stacked=True, color=["#b0a58f", "#5b4a2e"],
            label=[f"dropped ({len(dropped)})", f"kept ({len(kept)})"])
    ax.axvline(threshold, color="#c0392b", linestyle="--", label=f"threshold {threshold:g}")
    ax.set_xlabel("score")
    ax.set_ylabel("pages")
    ax.set_title(title)
    ax.legend(loc="upper center", fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    buf.seek(0)
    return Image.open(buf).convert("RGB")
