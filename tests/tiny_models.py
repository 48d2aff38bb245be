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


def build_sdxl_lora(base_dir: str | Path, out_dir: str | Path, rank: int = 4,
                    seed: int = 0) -> tuple[Path, Path]:
    """A random style LoRA for the tiny SDXL, saved as the trainer saves one.

    Returns (diffusers file, kohya file): ``pytorch_lora_weights.safetensors`` from
    the pipeline's own saver and ``lora_kohya.safetensors`` from ``lora.kohya``.
    """
    import torch
    from diffusers import StableDiffusionXLPipeline, UNet2DConditionModel
    from diffusers.utils import convert_state_dict_to_diffusers
    from peft import LoraConfig
    from peft.utils import get_peft_model_state_dict

    from lora.kohya import save_kohya

    torch.manual_seed(seed)
    unet = UNet2DConditionModel.from_pretrained(Path(base_dir) / "unet")
    unet.add_adapter(LoraConfig(r=rank, lora_alpha=rank, init_lora_weights="gaussian",
                                target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
    with torch.no_grad():  # lora_B starts at zero; a style that does something
        for name, param in unet.named_parameters():
            if "lora_B" in name:
                param.normal_(std=0.05)
    out = Path(out_dir)
    layers = convert_state_dict_to_diffusers(get_peft_model_state_dict(unet))
    StableDiffusionXLPipeline.save_lora_weights(out, unet_lora_layers=layers)
    diffusers_file = out / "pytorch_lora_weights.safetensors"
    return diffusers_file, save_kohya(diffusers_file, out / "lora_kohya.safetensors", alpha=rank)
