"""Make one image with SDXL and a style LoRA.

    python -m lora.generate "a cyber-monocle in the style of an 1890 engraving" -o out.png \\
        --base stabilityai/stable-diffusion-xl-base-1.0 --lora ./my-lora [--few-step]

``--base``/``--lora`` take a Hub id or a local folder. Offline, ``python -m lora.tiny DIR``
writes a tiny random SDXL to smoke-test with. Exit code 2 means bad input or a missing
model, with the reason on one line.
"""

from __future__ import annotations

import argparse
import sys
import types
from typing import Any

from .models import ModelUnavailable
from .pipeline import (
    FEW_GUIDANCE,
    FEW_STEPS,
    FULL_GUIDANCE,
    FULL_STEPS,
    generate,
    generate_with_settings,
    options_from_settings,
    read_settings,
    save_png,
)

__all__ = ["generate", "main"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m lora.generate", description=__doc__.split("\n")[0])
    p.add_argument("prompt", nargs="?", help="what to draw (optional with --from-png)")
    p.add_argument("-o", "--output", required=True, help="PNG to write")
    p.add_argument(
        "--base",
        help="SDXL base: Hub id or folder (default $LORA_BASE_MODEL or "
        "stabilityai/stable-diffusion-xl-base-1.0)",
    )
    p.add_argument("--lora", help="style LoRA: Hub id, folder or .safetensors ($LORA_WEIGHTS)")
    p.add_argument("--lora-scale", type=float, help="default 0.8")
    p.add_argument("--negative", default="", help="negative prompt")
    p.add_argument(
        "--steps", type=int, help=f"default {FULL_STEPS}, or {FEW_STEPS} with --few-step"
    )
    p.add_argument(
        "--guidance", type=float, help=f"default {FULL_GUIDANCE}, or {FEW_GUIDANCE} with --few-step"
    )
    p.add_argument("--size", type=int, help="square side in pixels (default 1024)")
    p.add_argument("--seed", type=int, help="default: random, recorded in the PNG")
    p.add_argument("--few-step", action="store_true", help="LCM-LoRA + LCM scheduler, 4-8 steps")
    p.add_argument(
        "--few-step-lora",
        help="LCM-LoRA Hub id or folder (default latent-consistency/lcm-lora-sdxl)",
    )
    p.add_argument("--vae", help="fp16 VAE for the GPU (default madebyollin/sdxl-vae-fp16-fix)")
    p.add_argument("--device", help="cuda | cpu (default: cuda when present)")
    p.add_argument("--dtype", choices=["fp16", "bf16", "fp32"])
    p.add_argument("--from-png", help="remake an image from the settings embedded in this PNG")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    opts: dict[str, Any] = {}
    prompt = args.prompt
    try:
        if args.from_png:
            saved = read_settings(args.from_png)
            if not saved:
                raise ValueError(f"{args.from_png} holds no lora.generate settings")
            prompt = prompt or saved["prompt"]
            opts.update(options_from_settings(saved))
        given = {
            "negative": args.negative or None,
            "base": args.base,
            "lora": args.lora,
            "lora_scale": args.lora_scale,
            "steps": args.steps,
            "guidance": args.guidance,
            "size": args.size,
            "seed": args.seed,
            "few_step": args.few_step or None,
            "few_step_lora": args.few_step_lora,
            "vae": args.vae,
            "device": args.device,
            "dtype": args.dtype,
        }
        opts.update({k: v for k, v in given.items() if v is not None})
        if prompt is None:
            raise ValueError("give a prompt (or --from-png)")
        image, settings = generate_with_settings(prompt, **opts)
        out = save_png(image, args.output, settings)
    except (ModelUnavailable, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out} (seed {settings['seed']}, {settings['steps']} steps)")
    return 0


class _CallableModule(types.ModuleType):
    """``lora.generate(...)`` keeps working even after this module is imported by name."""

    def __call__(self, prompt: str, **opts: Any) -> Any:
        return generate(prompt, **opts)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
