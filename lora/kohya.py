"""A kohya-format copy of a diffusers LoRA, for ComfyUI and AUTOMATIC1111.

Key names (diffusers module path, dots to underscores, behind a prefix)::

    unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q.lora.down.weight
 -> lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q.lora_down.weight
    ...lora.up.weight -> ...lora_up.weight   (PEFT's lora_A / lora_B are accepted too)
    (one per module)  -> ...alpha          (a 0-d tensor: the LoRA alpha)

    text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora.down.weight
 -> lora_te1_text_model_encoder_layers_0_self_attn_q_proj.lora_down.weight
    text_encoder_2.… -> lora_te2_…

ComfyUI and A1111 map these diffusers-named ``lora_unet_`` keys onto SDXL
themselves. The effective scale of a module is ``alpha / rank``, as in PEFT.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

PREFIXES = {"unet.": "lora_unet_", "text_encoder.": "lora_te1_", "text_encoder_2.": "lora_te2_"}
SUFFIXES = {
    ".lora.down.weight": ".lora_down.weight",  # what diffusers' save_lora_weights writes
    ".lora.up.weight": ".lora_up.weight",
    ".lora_linear_layer.down.weight": ".lora_down.weight",  # ... and for text encoders
    ".lora_linear_layer.up.weight": ".lora_up.weight",
    ".lora_A.weight": ".lora_down.weight",  # PEFT names, accepted too
    ".lora_B.weight": ".lora_up.weight",
}


def kohya_key(diffusers_key: str) -> tuple[str, str]:
    """(module name, kohya suffix) for one diffusers LoRA key."""
    prefix = next((p for p in PREFIXES if diffusers_key.startswith(p)), None)
    if prefix is None:
        raise ValueError(f"not a diffusers LoRA key: {diffusers_key!r}")
    rest = diffusers_key[len(prefix) :]
    for src_suffix, dst_suffix in SUFFIXES.items():
        if rest.endswith(src_suffix):
            module = rest[: -len(src_suffix)]
            if prefix != "unet." and module.startswith("encoder."):
                module = "text_model." + module  # transformers 5 drops it; kohya keeps it
            return PREFIXES[prefix] + module.replace(".", "_"), dst_suffix
    raise ValueError(f"not a LoRA A/B weight: {diffusers_key!r}")


def to_kohya(state_dict: dict[str, Any], alpha: float) -> dict[str, Any]:
    """Rename a diffusers LoRA state dict to kohya keys and add one ``.alpha`` per module."""
    import torch

    out: dict[str, Any] = {}
    for key, tensor in state_dict.items():
        module, suffix = kohya_key(key)
        out[module + suffix] = tensor.detach().contiguous()
        out.setdefault(module + ".alpha", torch.tensor(float(alpha)))
    return out


def save_kohya(
    diffusers_file: str | Path,
    out_file: str | Path,
    alpha: float,
    metadata: dict[str, str] | None = None,
) -> Path:
    """Write the kohya copy next to the diffusers weights."""
    from safetensors.torch import load_file, save_file

    state = load_file(str(diffusers_file))
    out = Path(out_file)
    save_file(to_kohya(state, alpha), str(out), metadata=metadata or {})
    return out
