"""The species head: ImageNet's own classes as the prior, plus a bounded learned correction.

ImageNet has no class for a close-up of an udder, and none for a goat, so its
species guess alone sends the photos the scanner knows best to "pig" or
"camelid". The correction is a linear layer on the ImageNet features (the
reference branch's pooled output), trained only on licensed photos of the
species that have them (cattle, sheep, chickens, pigs, goats). It is bounded
(``bound * tanh``), and a species it was not trained on (ducks, horses, camelids, and any
left out of the fit) keeps ImageNet's own summed probability: the correction only moves
the trained species among themselves, by at most a factor ``exp(2 * bound)``, so a
mouth close-up it pushes away from every trained species does not become a duck.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from vet.gate import SPECIES_CLASSES, species_scores

SPECIES = tuple(SPECIES_CLASSES)  # the head's columns, in this order
PRIOR_FLOOR = 1e-3  # a species ImageNet gives nothing keeps this much before the correction


def prior_logits(imagenet_probs: torch.Tensor) -> torch.Tensor:
    """Log of ImageNet's species mass, renormalised over the farm species (N, species)."""
    mass = species_scores(imagenet_probs.float(), SPECIES) + PRIOR_FLOOR
    return torch.log(mass / mass.sum(-1, keepdim=True))


def species_probs(imagenet_probs: torch.Tensor, pooled: torch.Tensor, weight: torch.Tensor,
                  bias: torch.Tensor, trained: torch.Tensor, bound: float) -> torch.Tensor:
    """P(species), (N, species) in ``SPECIES`` order: a species without licensed photos
    keeps ImageNet's own (summed) probability; the trained species share what is left,
    by the prior moved by the correction."""
    unit = F.normalize(pooled.float(), dim=-1)
    return torch.exp(head_logits(imagenet_probs.float(), unit, weight.float(), bias.float(),
                                 trained.float(), bound))


def head_logits(imagenet_probs: torch.Tensor, unit: torch.Tensor, weight: torch.Tensor,
                bias: torch.Tensor, trained: torch.Tensor, bound: float) -> torch.Tensor:
    """Log-probabilities per species. The correction (at most ``bound`` per species) only
    moves the trained species among themselves: on a mouth close-up that the correction
    pushes away from every trained species, an untrained duck would otherwise become the
    guess (and a bird never gets the FMD warning)."""
    mass = species_scores(imagenet_probs, SPECIES)
    kept = (mass * (1 - trained)).clamp(min=PRIOR_FLOOR * 1e-3)
    left = (1 - kept.mul(1 - trained).sum(-1, keepdim=True)).clamp(min=PRIOR_FLOOR)
    moved = torch.log(mass + PRIOR_FLOOR) + bound * torch.tanh(unit @ weight.T + bias)
    moved = moved.masked_fill(trained == 0, float("-inf")).log_softmax(-1) + torch.log(left)
    return torch.where(trained > 0, moved, torch.log(kept))


def fit_species_head(unit: torch.Tensor, imagenet_probs: torch.Tensor, y: np.ndarray,
                     bound: float = 3.0, weight_decay: float = 1e-3, steps: int = 300,
                     seed: int = 0, balance: float = 1.0) -> dict[str, torch.Tensor]:
    """Fit the correction by class-balanced cross-entropy (full batch, L-BFGS).

    ``y`` holds indices into ``SPECIES``; species that never occur in it get no
    correction at all. With ``balance`` 1 every species weighs the same in the loss, so
    the many cattle photos do not teach the head that everything is a cow; under 1 (0.5:
    square-root weights) a species with a dozen photos weighs less than its thousands.
    """
    torch.manual_seed(seed)
    present = sorted(set(y.tolist()))
    trained = torch.zeros(len(SPECIES))
    trained[present] = 1.0
    counts = np.bincount(y, minlength=len(SPECIES)).astype(np.float64)
    w_cls = torch.tensor(np.where(counts > 0, (counts.sum() / np.maximum(counts, 1)) ** balance,
                                  0.0)).float()
    w_cls = w_cls / w_cls[present].mean()
    x = F.normalize(unit.float(), dim=-1)
    ref = imagenet_probs.float()
    yt = torch.from_numpy(y).long()
    weight = torch.zeros(len(SPECIES), x.shape[1], requires_grad=True)
    bias = torch.zeros(len(SPECIES), requires_grad=True)
    opt = torch.optim.LBFGS([weight, bias], lr=0.5, max_iter=steps, history_size=20,
                            line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        opt.zero_grad()
        logp = head_logits(ref, x, weight, bias, trained, bound)
        loss = F.nll_loss(logp, yt, weight=w_cls) + weight_decay * (weight ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return {"weight": weight.detach(), "bias": bias.detach(), "trained": trained,
            "bound": float(bound)}
