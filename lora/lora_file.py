"""What a style LoRA file is, read from its safetensors header alone (no tensor is loaded).

A user hands the tab a ``.safetensors`` file; before it is used we check that it is a
LoRA at all, in diffusers (``unet.…lora.down.weight``, PEFT ``lora_A``) or kohya
(``lora_unet_…lora_down.weight``) naming; which base it was made for, from its names and
cross-attention width (SD 1.5 is 768 wide, SD 2 1024, SDXL 2048 with a second text
encoder: the tab runs SDXL only); and, when the base model is a local folder, that the
width matches the base's UNet. A file that fails says why as a code
(:attr:`BadLoraFile.code`, with :attr:`BadLoraFile.fields` for its sentence); the UI turns
the code into words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DIFFUSERS_PREFIXES = ("unet.", "text_encoder.", "text_encoder_2.", "transformer.")
KOHYA_PREFIXES = ("lora_unet_", "lora_te_", "lora_te1_", "lora_te2_")
_DOWN = (".lora.down.weight", ".lora_A.weight", ".lora_down.weight",
         ".lora_linear_layer.down.weight", "_lora.down.weight")
# The base a LoRA was made for, by the width of its UNet's cross-attention (the text
# encoder's output): SD 1.x reads CLIP-L (768), SD 2.x OpenCLIP-H (1024), SDXL both (2048).
WIDTH_FAMILY = {768: "SD 1.5", 1024: "SD 2", 2048: "SDXL"}
# kohya's names for Flux's blocks; diffusers writes them as transformer.single_transformer_…
_FLUX_MARKS = ("single_transformer_blocks", "lora_unet_single_blocks_", "lora_unet_double_blocks_")
# What each code means; ``ui_strings/lora.json`` has a sentence ``lora_err_file_<code>`` each.
CODES = ("wrong_name", "not_safetensors", "no_lora", "other_base", "not_sdxl", "other_model",
         "bad_hub_id")


class BadLoraFile(ValueError):
    """Not a usable style LoRA. ``code`` (one of :data:`CODES`): ``wrong_name`` the name
    does not end in .safetensors; ``not_safetensors`` the bytes are not a safetensors file;
    ``no_lora`` no LoRA weights in it; ``other_base`` made for another base, named in
    ``fields["family"]``; ``not_sdxl`` made for a transformer model that is not SDXL;
    ``other_model`` wider or narrower than the local base; ``bad_hub_id`` not owner/name."""

    def __init__(self, code: str, detail: str, **fields: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail
        self.fields = fields


@dataclass(frozen=True)
class LoraFile:
    path: Path
    format: str  # "diffusers" | "kohya"
    tensors: int
    context_dim: int | None  # the cross-attention input width, when the file shows it
    family: str | None = None  # "SDXL" when the file shows it; None when it does not say


def inspect(path: str | Path, base: str | Path | None = None) -> LoraFile:
    """The file's format and size, or :class:`BadLoraFile` saying what is wrong with it."""
    path = Path(path)
    keys, shapes = _header(path)
    lora = [k for k in keys if "lora" in k.lower()]
    if any(k.startswith(KOHYA_PREFIXES) for k in lora):
        fmt = "kohya"
    elif any(k.startswith(DIFFUSERS_PREFIXES) for k in lora):
        fmt = "diffusers"
    else:
        raise BadLoraFile("no_lora", f"{path.name}: no LoRA weights among {len(keys)} tensors")
    family = base_family(lora, shapes)
    if family == "transformer":
        raise BadLoraFile("not_sdxl", f"{path.name}: LoRA for a transformer model, not a UNet")
    if family and family != "SDXL":
        raise BadLoraFile("other_base", f"{path.name}: made for {family}", family=family)
    found = LoraFile(path, fmt, len(keys), _context_dim(shapes), family)
    want = base_context_dim(base)
    if want and found.context_dim and want != found.context_dim:
        raise BadLoraFile("other_model", f"{path.name}: cross-attention {found.context_dim} wide, "
                                         f"the base model's is {want}")
    return found


def _header(path: Path) -> tuple[list[str], dict[str, list[int]]]:
    """Tensor names and shapes from the safetensors header (8-byte length, then JSON)."""
    try:
        with open(path, "rb") as fh:
            size = int.from_bytes(fh.read(8), "little")
            if not 2 <= size <= 100_000_000:
                raise ValueError(f"header length {size}")
            header = json.loads(fh.read(size))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise BadLoraFile("not_safetensors", f"{path.name}: {exc}") from None
    if not isinstance(header, dict):
        raise BadLoraFile("not_safetensors", f"{path.name}: the header is not a table")
    tensors = {k: v for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)}
    return list(tensors), {k: list(v.get("shape", [])) for k, v in tensors.items()}


def base_family(keys: list[str], shapes: dict[str, list[int]]) -> str | None:
    """The base a LoRA was made for: "SDXL", "SD 1.5", "SD 2", "Flux", "transformer" (some
    other DiT, such as SD 3) or None when its names and shapes do not tell."""
    if any(k.startswith(("lora_te2_", "text_encoder_2.")) for k in keys):
        return "SDXL"  # only SDXL has a second text encoder beside a UNet
    if any(mark in k for k in keys for mark in _FLUX_MARKS):
        return "Flux"
    if keys and all(k.startswith(("transformer.", "lora_transformer_")) for k in keys):
        return "transformer"
    width = _context_dim(shapes)
    if width is None:  # a text-encoder-only LoRA: kohya writes lora_te_ for SD 1.x/2.x
        te = [s for k, s in shapes.items() if k.startswith("lora_te_") and "k_proj" in k
              and k.endswith(_DOWN) and len(s) == 2]
        width = te[0][1] if te else None
    return WIDTH_FAMILY.get(width) if width else None


def _context_dim(shapes: dict[str, list[int]]) -> int | None:
    """The in-features of a cross-attention key projection (attn2 to_k), if there is one."""
    for key, shape in shapes.items():
        flat = key.replace(".", "_")
        if "attn2" in flat and "to_k" in flat and key.endswith(_DOWN) and len(shape) == 2:
            return shape[1]
    return None


def base_context_dim(base: str | Path | None) -> int | None:
    """``cross_attention_dim`` of a local base model's UNet; None when unknown."""
    if not base:
        return None
    config = Path(base).expanduser() / "unet" / "config.json"
    try:
        value = json.loads(config.read_text(encoding="utf-8")).get("cross_attention_dim")
    except (OSError, ValueError):
        return None
    return value if isinstance(value, int) else None
