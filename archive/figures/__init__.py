"""The figure finder, one stage a file, in the order a page goes through them:
``extent`` (the page inside the scan) → ``ink`` (the page's ink, measured once) →
``proposals`` (candidate boxes; ``frames`` and ``ring_stamps`` cut and clean them) →
``measures`` and ``ornaments`` (what a box is like) → ``verdicts`` (kept, or why not) →
``finder`` (the page read upright, level, closer or twice; boxes out). Each stage's
constants sit in its typed config (``config``). The public face is ``finder``'s."""

from archive.figures.finder import (
    CLOSER,
    DEFAULT_MIN_AREA,
    KINDS,
    NEVER_KEPT,
    OUTCOME_REASONS,
    PARAMS,
    PREVIEW_SIDE,
    REASONS,
    REVIEW_FLOOR,
    THRESHOLD,
    Closer,
    Finding,
    Region,
    candidates,
    figures,
    find,
    reason_words,
)
from archive.figures.ink import Box

__all__ = ["CLOSER", "DEFAULT_MIN_AREA", "KINDS", "NEVER_KEPT", "OUTCOME_REASONS", "PARAMS",
           "PREVIEW_SIDE", "REASONS", "REVIEW_FLOOR", "THRESHOLD", "Box", "Closer", "Finding",
           "Region", "candidates", "figures", "find", "reason_words"]
