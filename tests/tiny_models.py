"""Tiny random-weight models, saved and reloaded through ``from_pretrained``.

Tests load them through the very code path a Hub id takes, so a test that
passes here exercises the real loader, not a mock.
"""

from __future__ import annotations

from pathlib import Path

LABELS = ["healthy", "lumpy_skin", "pinkeye", "mastitis"]


def build_image_classifier(out_dir: str | Path, hidden: int = 32, layers: int = 2) -> Path:
    """A ViT image classifier with a processor, like any Hub checkpoint folder."""
    import torch
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessorPil

    torch.manual_seed(0)
    config = ViTConfig(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        intermediate_size=hidden * 2,
        id2label=dict(enumerate(LABELS)),
        label2id={name: i for i, name in enumerate(LABELS)},
    )
    out = Path(out_dir)
    ViTForImageClassification(config).save_pretrained(out)
    ViTImageProcessorPil(size={"height": 32, "width": 32}).save_pretrained(out)
    return out


def build_sdxl(out_dir: str | Path) -> Path:
    """The tiny SDXL that ``python -m lora.tiny`` writes."""
    from lora.tiny import build_tiny_sdxl

    return build_tiny_sdxl(out_dir)


def build_captioner(out_dir: str | Path, extra_words: int = 2000) -> Path:
    """The tiny BLIP captioner that ``python -m archive.tiny_captioner`` writes."""
    from archive.tiny_captioner import build_tiny_captioner

    return build_tiny_captioner(out_dir, extra_words=extra_words)
