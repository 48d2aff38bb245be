"""A tiny random-weight BLIP captioner, written to disk like any Hub checkpoint.

It lets tests, CI and a machine without network run the real ``--captioner`` path
(``AutoProcessor`` and ``AutoModelForImageTextToText.from_pretrained`` on a folder)
end to end in seconds. Its captions are random words: a smoke-test model only.

    python -m archive.tiny_captioner OUT_DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

WORDS = ("a woman man saint horse mill church ship tree with holding standing in front of the "
         "dress hat umbrella sword book flowers garden street two three people engraving").split()
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_captioner(out_dir: str | Path, hidden: int = 64, extra_words: int = 2000,
                         seed: int = 0, layers: int = 2, heads: int = 4, image_size: int = 32,
                         patch: int = 8) -> Path:
    """BLIP's layout (ViT encoder, BERT decoder, a WordPiece tokenizer) at toy size.

    ``extra_words`` sizes the vocabulary and so the weights: a test that checks the
    model is released wants weights big enough to see in the process's RSS. With
    ``hidden=768, layers=12, heads=12, image_size=384, patch=16`` and about 30,500
    words it is BLIP-base's size (``bench/lora_gpu_check.py``).
    """
    import torch
    from transformers import (
        BertTokenizer,
        BlipConfig,
        BlipForConditionalGeneration,
        BlipImageProcessorPil,
        BlipProcessor,
    )

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    vocab = SPECIAL + WORDS + [f"w{i}" for i in range(extra_words)] + ["[DEC]"]
    (out / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(str(out / "vocab.txt"), do_lower_case=True, model_max_length=64)
    tokenizer.add_special_tokens({"bos_token": "[DEC]"})
    torch.manual_seed(seed)
    config = BlipConfig(
        text_config=dict(vocab_size=len(vocab), hidden_size=hidden, num_hidden_layers=layers,
                         num_attention_heads=heads, intermediate_size=4 * hidden,
                         max_position_embeddings=64, bos_token_id=len(vocab) - 1,
                         pad_token_id=0, sep_token_id=3, eos_token_id=3),
        vision_config=dict(hidden_size=hidden, image_size=image_size, patch_size=patch,
                           num_hidden_layers=layers, num_attention_heads=heads,
                           intermediate_size=4 * hidden),
        projection_dim=hidden,
    )
    BlipForConditionalGeneration(config).save_pretrained(out)
    size = {"height": image_size, "width": image_size}
    processor = BlipProcessor(image_processor=BlipImageProcessorPil(size=size),
                              tokenizer=tokenizer)
    processor.save_pretrained(out)
    (out / "README.md").write_text(
        "# Tiny random BLIP captioner (smoke-test model)\n\nRandom weights in BLIP's layout, "
        "written by `python -m archive.tiny_captioner`. Its captions are random words: use "
        "it to check that `--captioner` runs end to end, never for real captions.\n",
        encoding="utf-8")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m archive.tiny_captioner",
                                description=__doc__.split("\n")[0])
    p.add_argument("out_dir")
    args = p.parse_args(argv)
    print(f"wrote a tiny random BLIP captioner (smoke-test model) to "
          f"{build_tiny_captioner(args.out_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
