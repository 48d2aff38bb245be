"""Cached early-block feature maps run through a model's later blocks, for training.

Kept apart from ``vet.open_set`` (which the model class imports) so that the
model, the converter and the open-set statistics import one way only:
``forward`` -> ``convert`` -> ``modeling_efficientnet_lite`` -> ``open_set``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from vet.convert import imagenet_model


def imagenet_pooled(feats: torch.Tensor, idx: np.ndarray, branch_from: int) -> torch.Tensor:
    """Unit-norm ImageNet features (the reference branch) of cached photos."""
    model = imagenet_model()
    outs = []
    with torch.inference_mode():
        for s in range(0, len(idx), 128):
            h = feats[torch.from_numpy(idx[s: s + 128])].float()
            for blk in model.blocks[branch_from:]:
                h = blk(h)
            outs.append(F.normalize(model.head(h).mean((2, 3)), dim=-1))
    return torch.cat(outs) if outs else torch.zeros(0, model.config.head_channels)


def branch_outputs(model, feats: torch.Tensor, idx: np.ndarray, branch_from: int
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits and pooled features of the fine-tuned branch on cached photos, plain view
    (what the deployed model computes; the open-set statistics live on the pooled)."""
    model.eval()
    logits, pooled = [], []
    with torch.inference_mode():
        for s in range(0, len(idx), 128):
            i = torch.from_numpy(idx[s: s + 128])
            a, b = model.forward_from_block(feats[i].float(), branch_from)
            logits.append(a)
            pooled.append(b)
    if not logits:
        return torch.zeros(0, 0), torch.zeros(0, 0)
    return torch.cat(logits), torch.cat(pooled)
