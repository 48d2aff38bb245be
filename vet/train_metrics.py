"""Held-out metrics of the condition model, decided among the answer labels."""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from vet.labels import answer_logits, base


def per_class_report(y: np.ndarray, pred: np.ndarray, labels: list[str]) -> dict[str, dict]:
    out = {}
    for k, name in enumerate(labels):
        tp = int(((pred == k) & (y == k)).sum())
        fp = int(((pred == k) & (y != k)).sum())
        fn = int(((pred != k) & (y == k)).sum())
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        out[name] = {"precision": p, "recall": r, "f1": f, "support": int((y == k).sum())}
    return out


def macro_f1(report: dict[str, dict], names: list[str]) -> float:
    vals = [report[n]["f1"] for n in names if report[n]["support"] > 0]
    return float(np.mean(vals)) if vals else 0.0


def fit_temperature(logits: torch.Tensor, y: torch.Tensor, labels: list[str] | None = None,
                    answer: list[str] | None = None) -> float:
    """Temperature minimising validation NLL (a fine grid: robust, no optimiser quirks).

    With ``labels`` and ``answer`` the NLL is over the answer labels, sub-classes
    pooled after scaling, which is how the triage reads the logits.
    """
    grid = np.exp(np.linspace(math.log(0.3), math.log(5.0), 200))
    if labels is None or answer is None:
        nll = [float(F.cross_entropy(logits / t, y)) for t in grid]
    else:
        nll = [float(F.cross_entropy(answer_logits(logits, labels, answer, t), y)) for t in grid]
    return float(grid[int(np.argmin(nll))])


def answer_targets(y: np.ndarray, labels: list[str], answer: list[str]
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Which photos belong to an answer label, and that label's index in ``answer``."""
    names = [base(labels[k]) for k in y]
    mask = np.array([n in answer for n in names], dtype=bool)
    return mask, np.array([answer.index(n) for n, m in zip(names, mask, strict=True) if m],
                          dtype=np.int64)


def answer_predictions(logits: torch.Tensor, labels: list[str], answer: list[str]) -> np.ndarray:
    """Forced choice among the answer labels (sub-classes added up), as indices of ``answer``."""
    if len(logits) == 0:
        return np.zeros(0, dtype=np.int64)
    return answer_logits(logits, labels, answer).argmax(1).numpy()


def ece(probs: torch.Tensor, y: torch.Tensor, bins: int = 10) -> float:
    conf, pred = probs.max(1)
    acc = (pred == y).float()
    total = 0.0
    edges = torch.linspace(0, 1, bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            total += float(m.float().mean() * (conf[m].mean() - acc[m].mean()).abs())
    return total


def evaluate_fold(vlog: torch.Tensor, yv: np.ndarray, tlog: torch.Tensor, yt: np.ndarray,
                  labels: list[str], answer: list[str], sources: list[str]) -> dict:
    """Held-out metrics, decided among the answer labels (sub-classes added up).

    The temperature is fitted on the validation photos. Besides the macro-F1 over
    every answer label, the macro-F1 without FMD (the conditions the issue tracks)
    and both per source repository.
    """
    vm, yva = answer_targets(yv, labels, answer)
    tm, yta = answer_targets(yt, labels, answer)
    temp = fit_temperature(vlog[vm], torch.from_numpy(yva), labels, answer)
    tl = answer_logits(tlog[tm], labels, answer)
    pred = tl.argmax(1).numpy()
    rep = per_class_report(yta, pred, answer)
    others = [c for c in answer if c != "fmd"]
    src = np.array(sources)[tm]
    per_source = {}
    for s in sorted(set(src.tolist())):
        m = src == s
        r = per_class_report(yta[m], pred[m], answer)
        per_source[s] = {"n": int(m.sum()), "accuracy": float((pred[m] == yta[m]).mean()),
                         "macro_f1": macro_f1(r, answer),
                         "macro_f1_without_fmd": macro_f1(r, others),
                         "per_class": {c: r[c] for c in answer if r[c]["support"]}}
    res = {
        "n_test": int(tm.sum()), "temperature": temp,
        "test_macro_f1": macro_f1(rep, answer),
        "test_macro_f1_without_fmd": macro_f1(rep, others),
        "test_accuracy": float((pred == yta).mean()),
        "test_ece_before": ece(tl.softmax(1), torch.from_numpy(yta)),
        "test_ece_after": ece((answer_logits(tlog[tm], labels, answer, temp)).softmax(1),
                              torch.from_numpy(yta)),
        "per_class": {c: rep[c] for c in answer},
        "per_source": per_source,
    }
    bases = sorted({base(c) for c in labels})
    if answer != bases:  # what the model would score if it answered every trained class
        full = np.array([bases.index(base(labels[k])) for k in tlog.argmax(1).tolist()])
        truth = np.array([bases.index(base(labels[k])) for k in yt])
        rep_all = per_class_report(truth, full, bases)
        res["all_labels_decision"] = {
            "n_test": len(yt), "macro_f1_answer_labels": macro_f1(rep_all, answer),
            "macro_f1_all_labels": macro_f1(rep_all, bases), "per_class": rep_all}
    return res
