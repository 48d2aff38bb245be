"""What the shipped model stores about its training photos, for the gate and the open set.

* ImageNet-feature prototypes of training photos: the not-livestock gate lets a
  close-up through when it resembles them.
* Class-conditional Gaussians of the fine-tuned features (Mahalanobis distance,
  Lee et al. 2018): a photo far from every class is "unlike the training photos".
* The energy score of the condition logits (Liu et al. 2020): low evidence for
  every trained class is "unlike the training photos" too.
* A labelled neighbour memory: an answer few of the nearest training photos share
  is withheld.

Everything here works on features already computed (``vet.forward`` computes them),
so the model class can import it without an import circle.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F


def prototypes(train_unit: torch.Tensor, val_unit: torch.Tensor, seed: int, n: int = 512
               ) -> tuple[torch.Tensor, float]:
    """Training-photo ImageNet features (unit norm) for the gate, and the threshold.

    The threshold is the 2nd percentile of the validation photos' best match, so
    it is set from livestock photos alone; the documents it must reject are
    only used to measure it.
    """
    rng = np.random.default_rng(seed)
    pick = np.sort(rng.choice(len(train_unit), size=min(n, len(train_unit)), replace=False))
    protos = train_unit[torch.from_numpy(pick)]
    sims = (val_unit @ protos.T).max(-1).values
    return protos, float(torch.quantile(sims, 0.02))


def neighbour_memory(train_unit: torch.Tensor, y_train: np.ndarray, dim: int = 128) -> dict:
    """Every training photo's ImageNet features, labelled, for a k-nearest-neighbour check.

    The fine-tuned features put a healthy hoof right next to the udders (it was
    trained to tell lesions apart, not body parts); the untouched ImageNet
    features still see a hoof. Projected on the top ``dim`` principal
    directions to keep the checkpoint small.
    """
    x = train_unit.double()
    center = x.mean(0)
    _, _, vt = torch.linalg.svd(x - center, full_matrices=False)
    proj = vt[: min(dim, len(x))].T
    return {"center": center.float(), "projection": proj.float(),
            "memory": F.normalize(((x - center) @ proj).float(), dim=-1),
            "labels": torch.from_numpy(y_train).long()}


def neighbour_share(memory: dict, query: torch.Tensor, n_labels: int, k: int) -> torch.Tensor:
    """Share of the ``k`` nearest training photos in each trained class, (N, n_labels)."""
    q = F.normalize(query.float(), dim=-1) - memory["center"].float()
    z = F.normalize(q @ memory["projection"].float(), dim=-1)
    idx = (z @ memory["memory"].float().T).topk(min(k, len(memory["memory"])), -1).indices
    return F.one_hot(memory["labels"][idx], n_labels).float().mean(1)


def neighbour_threshold(share: torch.Tensor, right: np.ndarray, keep: float = 0.97) -> float:
    """The largest minimum share that keeps ``keep`` of the right validation answers.

    ``share`` holds, per photo, the neighbours' share of its predicted class; set
    on licensed validation photos only, like every other threshold.
    """
    ok = share[torch.from_numpy(right)].numpy()
    best = 0.0
    for t in np.round(np.arange(0.0, 0.61, 0.05), 2):
        if len(ok) and (ok >= t).mean() >= keep:
            best = float(t)
    return best


def open_set_stats(train_pooled: torch.Tensor, val_pooled: torch.Tensor, y_train: np.ndarray,
                   dim: int, shrink: float = 0.1, keep: float = 0.95) -> dict:
    """Class-conditional Gaussians with a shared covariance on the training features.

    Projected on the top ``dim`` principal directions and whitened, so the model
    stores a (1280, dim) projection and one mean per class. The threshold keeps
    ``keep`` of the validation photos (in-distribution by construction): it is set
    without looking at any out-of-distribution photo.
    """
    tr = train_pooled.double()
    dim = max(1, min(dim, len(tr) - len(set(y_train.tolist()))))
    center = tr.mean(0)
    _, _, vt = torch.linalg.svd(tr - center, full_matrices=False)
    proj = vt[:dim].T
    z = (tr - center) @ proj
    yt = torch.from_numpy(y_train)
    classes = sorted(set(yt.tolist()))
    means = torch.stack([z[yt == k].mean(0) for k in classes])
    resid = z - means[torch.searchsorted(torch.tensor(classes), yt)]
    cov = resid.T @ resid / len(z)
    cov = (1 - shrink) * cov + shrink * torch.trace(cov) / dim * torch.eye(dim, dtype=cov.dtype)
    # precision = L L^T, so |(x - m) L|^2 is the Mahalanobis distance.
    chol = torch.linalg.cholesky(torch.linalg.inv(cov))
    proj_w, means_w = proj @ chol, means @ chol
    va = val_pooled.double()
    dist = (torch.cdist((va - center) @ proj_w, means_w) ** 2).min(-1).values
    return {"center": center.float(), "projection": proj_w.float(), "means": means_w.float(),
            "classes": classes, "threshold": float(torch.quantile(dist, keep)), "keep": keep,
            "dim": dim, "shrink": shrink}


def energy_threshold(val_logits: torch.Tensor, keep: float = 0.95) -> float:
    """Energy (logsumexp of the logits; Liu et al. 2020) under which a photo is unlike
    the training photos: the ``1 - keep`` quantile of the validation photos, so, like
    the Mahalanobis threshold, it is set without any out-of-distribution photo."""
    return float(torch.quantile(torch.logsumexp(val_logits.float(), -1), 1 - keep))


def attach_neighbours(full, memory: dict, k: int, threshold: float) -> None:
    full.config.knn_dim = int(memory["projection"].shape[1])
    full.config.knn_size = int(len(memory["memory"]))
    full.config.knn_k = k
    full.config.knn_threshold = threshold
    for name in ("center", "projection", "memory", "labels"):
        full.register_buffer(f"knn_{name}", memory[name].clone())


def _attach_open_set(full, ood: dict) -> None:
    full.config.ood_dim = ood["dim"]
    full.config.ood_classes = len(ood["classes"])
    full.register_buffer("ood_center", ood["center"].clone())
    full.register_buffer("ood_projection", ood["projection"].clone())
    full.register_buffer("ood_means", ood["means"].clone())
    full.config.ood_threshold = ood["threshold"]
    full.config.ood_keep = ood["keep"]
