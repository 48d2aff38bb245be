"""A tiny random-weight SDXL, written to disk like any real checkpoint.

It exists so that everything (tests, CI, a machine without network) can run
the real ``from_pretrained`` code path end to end in seconds. Its images are
noise: it is a smoke-test model, never an artistic one.

    python -m lora.tiny OUT_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# GPT-2/CLIP byte-level alphabet: every byte maps to one printable character,
# so a vocab of just these characters (plus "</w>" forms) tokenizes any text.


def _bytes_to_unicode() -> dict[int, str]:
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    bs += list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, [chr(c) for c in cs], strict=True))


def write_byte_level_clip_tokenizer(folder: Path) -> None:
    """A CLIP tokenizer built in code: transformers ships no tokenizer files."""
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    chars = list(_bytes_to_unicode().values())
    tokens = chars + [c + "</w>" for c in chars] + ["<|startoftext|>", "<|endoftext|>"]
    vocab = {tok: i for i, tok in enumerate(tokens)}
    tok = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77, pad_token="<|endoftext|>")
    tok.save_pretrained(folder)


def build_tiny_sdxl(out_dir: str | Path, seed: int = 0) -> Path:
    """Write a diffusers SDXL folder (UNet, 8x VAE, both CLIP encoders) of random weights."""
    import torch
    from diffusers import (
        AutoencoderKL,
        EulerDiscreteScheduler,
        StableDiffusionXLPipeline,
        UNet2DConditionModel,
    )
    from transformers import (
        CLIPTextConfig,
        CLIPTextModel,
        CLIPTextModelWithProjection,
        CLIPTokenizer,
    )

    out = Path(out_dir)
    torch.manual_seed(seed)
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=32,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=(2, 4),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=8,
        transformer_layers_per_block=(1, 1),
        projection_class_embeddings_input_dim=80,  # 6 time ids * 8 + pooled 32
        cross_attention_dim=64,  # 32 (encoder 1) + 32 (encoder 2)
        norm_num_groups=8,
    )
    # Four blocks = three downsamplings = the real SDXL's 8x latent scale.
    vae = AutoencoderKL(
        block_out_channels=(8, 8, 16, 16),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        latent_channels=4,
        norm_num_groups=4,
        layers_per_block=1,
        sample_size=128,
    )
    text_cfg = dict(
        bos_token_id=512,
        eos_token_id=513,
        pad_token_id=513,
        hidden_size=32,
        intermediate_size=37,
        layer_norm_eps=1e-5,
        num_attention_heads=4,
        num_hidden_layers=2,
        vocab_size=514,
        max_position_embeddings=77,
        hidden_act="gelu",
        projection_dim=32,
    )
    text_encoder = CLIPTextModel(CLIPTextConfig(**text_cfg))
    text_encoder_2 = CLIPTextModelWithProjection(CLIPTextConfig(**text_cfg))
    tok_dir = out / "_tokenizer_src"
    write_byte_level_clip_tokenizer(tok_dir)
    tokenizer = CLIPTokenizer.from_pretrained(tok_dir)
    scheduler = EulerDiscreteScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        timestep_spacing="leading",
        steps_offset=1,
    )
    pipe = StableDiffusionXLPipeline(
        vae=vae,
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        tokenizer=tokenizer,
        tokenizer_2=tokenizer,
        unet=unet,
        scheduler=scheduler,
    )
    pipe.save_pretrained(out)
    for f in tok_dir.iterdir():
        f.unlink()
    tok_dir.rmdir()
    (out / "README.md").write_text(
        "# Tiny random SDXL (smoke-test model)\n\n"
        "Random weights in the real SDXL layout (text_time UNet, 8x VAE, two CLIP text "
        "encoders), written by `python -m lora.tiny`. Its images are noise: use it to "
        "check that generation and training run end to end, never for art.\n",
        encoding="utf-8",
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lora.tiny", description=__doc__.split("\n")[0])
    parser.add_argument("out_dir", help="folder to write the tiny SDXL into")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = build_tiny_sdxl(args.out_dir, seed=args.seed)
    print(f"wrote a tiny random SDXL (smoke-test model) to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
