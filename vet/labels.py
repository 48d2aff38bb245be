"""Trained classes versus answered conditions.

A condition can be trained as several sub-classes, named ``condition~part``
(for example ``healthy~tleeds1``: another source's whole-animal photos, kept
apart from the eye and udder close-ups that make up most of ``healthy``). One
class that has to cover two unlike kinds of photo takes capacity and weight
from its neighbours; two sub-classes do not, and the answer adds them up again.
"""

from __future__ import annotations

import torch

SUB = "~"


def base(label: str) -> str:
    """The answered condition a trained class belongs to."""
    return label.split(SUB, 1)[0]


def answer_columns(trained: list[str], answer: list[str]) -> list[list[int]]:
    """For each answer label, the trained columns that make it up."""
    cols = [[k for k, c in enumerate(trained) if base(c) == a] for a in answer]
    missing = [a for a, c in zip(answer, cols, strict=True) if not c]
    if missing:
        raise ValueError(f"answer labels without a trained class: {missing}")
    return cols


def answer_logits(logits: torch.Tensor, trained: list[str], answer: list[str],
                  temperature: float = 1.0) -> torch.Tensor:
    """Logits over the answer labels: sub-classes pooled by logsumexp, so their
    probabilities add up; classes that are trained but never answered drop out."""
    z = logits.float() / temperature
    return torch.stack([torch.logsumexp(z[:, c], -1)
                        for c in answer_columns(trained, answer)], -1)


def answer_sums(share: torch.Tensor, trained: list[str], answer: list[str]) -> torch.Tensor:
    """Per-class shares (such as the nearest neighbours') added up per answer label."""
    return torch.stack([share[:, c].sum(1) for c in answer_columns(trained, answer)], -1)
