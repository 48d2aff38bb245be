"""What a finished run leaves: the diffusers and kohya LoRA files, a model card, validation images.

Both LoRA files are written to a tmp folder and renamed, so a crash never leaves half a
file under the final name.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from .train_config import TrainConfig
from .train_data import MAX_CROP, TrainingSet, caption_with_trigger
from .train_models import Parts

LORA_FILE = "pytorch_lora_weights.safetensors"
KOHYA_FILE = "lora_kohya.safetensors"


def kohya_dataset_metadata(cfg: TrainConfig, data: TrainingSet) -> dict[str, str]:
    """kohya's own ``ss_*`` keys for buckets, repeats and captions, as its viewers read them."""
    buckets = {str(i): {"resolution": list(b), "count": seen}
               for i, (b, _, seen) in enumerate(data.histogram())}  # fmt: skip
    dirs = {p.name: {"n_repeats": p.repeats, "img_count": p.images} for p in data.parts}
    return {
        "ss_enable_bucket": str(cfg.buckets),
        "ss_bucket_info": json.dumps({"buckets": buckets}),
        "ss_dataset_dirs": json.dumps(dirs),
        "ss_num_train_images": str(len(data.slots)),
        "ss_caption_dropout_rate": str(cfg.caption_dropout),
        "ss_shuffle_caption": str(cfg.shuffle_tags),
    }


def save_lora(out: Path, parts: Parts, cfg: TrainConfig, unwrap: Any, data: TrainingSet) -> Path:
    """The diffusers file (via the pipeline's own saver) and the kohya copy, written atomically."""
    from diffusers import StableDiffusionXLPipeline
    from diffusers.utils import convert_state_dict_to_diffusers
    from peft.utils import get_peft_model_state_dict

    from .kohya import save_kohya

    unet = unwrap(parts.unet)
    layers: dict[str, Any] = {
        "unet_lora_layers": convert_state_dict_to_diffusers(get_peft_model_state_dict(unet)),
        "unet_lora_adapter_metadata": unet.peft_config["default"].to_dict(),
    }
    if cfg.train_text_encoder:
        for name, te in zip(("text_encoder", "text_encoder_2"), parts.text_encoders, strict=True):
            te = unwrap(te)
            layers[f"{name}_lora_layers"] = convert_state_dict_to_diffusers(
                get_peft_model_state_dict(te)
            )
            layers[f"{name}_lora_adapter_metadata"] = te.peft_config["default"].to_dict()
    tmp = out / ".tmp-lora"
    shutil.rmtree(tmp, ignore_errors=True)
    StableDiffusionXLPipeline.save_lora_weights(tmp, **layers)
    save_kohya(
        tmp / LORA_FILE,
        tmp / KOHYA_FILE,
        alpha=cfg.alpha or cfg.rank,
        metadata={
            "ss_network_module": "networks.lora",
            "ss_network_dim": str(cfg.rank),
            "ss_network_alpha": str(cfg.alpha or cfg.rank),
            "ss_base_model_version": "sdxl_base_v1-0",
            "ss_sd_model_name": str(cfg.base),
            "ss_resolution": str(cfg.resolution),
            **kohya_dataset_metadata(cfg, data),
        },
    )
    for name in (LORA_FILE, KOHYA_FILE):
        os.replace(tmp / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)
    return out / LORA_FILE


def bucket_table(data: TrainingSet) -> str:
    rows = [f"| {w}x{h} | {w / h:.2f} | {images} | {seen} |"
            for (w, h), images, seen in data.histogram()]  # fmt: skip
    head = "| bucket (w x h) | aspect | images | per epoch (with repeats) |\n|---|---|---|---|"
    return "\n".join([head, *rows])


def caption_sources(data: TrainingSet) -> str:
    """How many images' captions carry their page's printed title and a model's caption."""
    total = sum(p.images for p in data.parts)
    printed = sum(p.caption_kinds["printed text"] for p in data.parts)
    model = sum(p.caption_kinds["model caption"] for p in data.parts)
    return (f"What the captions say, from the archive: {printed} of {total} images carry the "
            f"title or caption printed next to them on the page (`printed_text`), {model} a "
            f"captioning model's description (`model_caption`); the rest, the archive's "
            f"template caption or their own.")


def write_model_card(
    out: Path, cfg: TrainConfig, data: TrainingSet, steps: int, final_loss: float | None
) -> Path:
    captions = [s.example.caption for s in data.samples[:3]]
    trigger = cfg.trigger or "(none: the captions themselves carry the style)"
    loss = final_loss if final_loss is None else f"{final_loss:.4f}"
    datasets = "\n".join(f"- `{p.name}`: {p.images} images, x{p.repeats} per epoch ({p.summary})"
                          for p in data.parts)  # fmt: skip
    if cfg.buckets:
        crop = (f"Aspect-ratio buckets (SDXL's set: sides multiples of 64, area about "
                f"{cfg.resolution}², 1:4 to 4:1); each image is resized to cover its nearest "
                f"bucket and center-cropped by what is left over.")  # fmt: skip
    else:
        crop = f"`--no-buckets`: every image center-cropped to {cfg.resolution}²."
    left_out = (f"\n\nLeft out ({len(data.left_out)}; a bucket would cut over {MAX_CROP:.0%} "
                f"of each): {', '.join(f'`{n}`' for n in data.left_out)}." if data.left_out
                else "")  # fmt: skip
    dropout = f"{cfg.caption_dropout:g}" + (" (the default)" if not cfg.caption_dropout else "")
    shuffle = "on" if cfg.shuffle_tags else "off (the default)"
    card = f"""---
base_model: {cfg.base}
library_name: diffusers
tags: [stable-diffusion-xl, lora, text-to-image, borde]
---
# Style LoRA for SDXL

Trained with `python -m lora.train` (Borde) on {", ".join(f"`{p.name}`" for p in data.parts)}.

- **Trigger word:** {trigger}
- **Base model:** `{cfg.base}`
- **Steps trained:** {steps}; final loss {loss}
- **Dataset:** {data.summary()}
- **Example captions:** {"; ".join(repr(c) for c in captions)}

## Data
{datasets}

{crop}{left_out}

{bucket_table(data)}

## Captions
- Trigger: {cfg.trigger or "none"}; it leads every caption unless the caption is dropped.
- Caption dropout (`--caption-dropout`, the probability of an empty caption): {dropout}.
- Tag shuffle (`--shuffle-tags`, comma-separated tags, the trigger's tag first): {shuffle}.
- {caption_sources(data)}

## Files
- `{LORA_FILE}`: diffusers format, `pipe.load_lora_weights("{out.name}")`.
- `{KOHYA_FILE}`: kohya format for ComfyUI / AUTOMATIC1111. Keys are the diffusers module
  paths with dots as underscores, e.g.
  `lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q.lora_down.weight`,
  `.lora_up.weight` and `.alpha` (= {cfg.alpha or cfg.rank}); text encoders use `lora_te1_`
  / `lora_te2_`. Its `ss_bucket_info` and `ss_dataset_dirs` hold the buckets and repeats.

## Use
```python
import lora
image = lora.generate("{caption_with_trigger("a cyber-monocle", cfg.trigger)}",
                      base="{cfg.base}", lora="{out}", lora_scale=0.8)
```
or `python -m lora.generate "PROMPT" -o out.png --base BASE --lora {out}`.

## Settings
```json
{json.dumps(cfg.settings(), indent=1)}
```
"""
    path = out / "README.md"
    path.write_text(card, encoding="utf-8")
    return path


def validate(
    parts: Parts,
    cfg: TrainConfig,
    step: int,
    device: str,
    weight_dtype: Any,
    unwrap: Any,
    out: Path,
) -> Path:
    """One image with the LoRA as it is now; the training RNG streams are left untouched."""
    import torch
    from diffusers import StableDiffusionXLPipeline

    unet = unwrap(parts.unet)
    tes = [unwrap(te) for te in parts.text_encoders]
    here = torch.device(device).type
    moved = [m for m in [*tes, parts.vae] if m.device.type != here]
    for m in moved:
        m.to(device)
    pipe = StableDiffusionXLPipeline.from_pretrained(
        parts.base.path,
        unet=unet,
        vae=parts.vae,
        text_encoder=tes[0],
        text_encoder_2=tes[1],
        tokenizer=parts.tokenizers[0],
        tokenizer_2=parts.tokenizers[1],
        local_files_only=parts.base.local,
    )
    pipe.set_progress_bar_config(disable=True)
    unet.eval()
    devices = [torch.cuda.current_device()] if device.startswith("cuda") else []
    with (
        torch.random.fork_rng(devices=devices),
        torch.no_grad(),
        torch.autocast(
            device_type="cuda" if device.startswith("cuda") else "cpu",
            dtype=weight_dtype,
            enabled=device.startswith("cuda") and weight_dtype != torch.float32,
        ),
    ):
        image = pipe(
            caption_with_trigger(cfg.validation_prompt or "", cfg.trigger),
            num_inference_steps=cfg.validation_steps,
            height=cfg.resolution,
            width=cfg.resolution,
            generator=torch.Generator("cpu").manual_seed(cfg.seed),
        ).images[0]
    unet.train()
    for m in moved:
        m.to("cpu")
    del pipe
    path = out / "validation" / f"step-{step:06d}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)
    return path
