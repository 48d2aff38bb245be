"""What a style LoRA file is, read from its safetensors header alone (no tensor is loaded).

A user hands the tab a ``.safetensors`` file; before it is used we check that it is a
LoRA at all, in diffusers (``unet.…lora.down.weight``, PEFT ``lora_A``) or kohya
(``lora_unet_…lora_down.weight``) naming, and, when the base model is a local folder,
that its cross-attention width matches the base's UNet (an SD 1.5 LoRA is 768 wide,
SDXL 2048). A file that fails says why as a code (:attr:`BadLoraFile.code`); the UI
turns the code into words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

DIFFUSERS_PREFIXES = ("unet.", "text_encoder.", "text_encoder_2.", "transformer.")
KOHYA_PREFIXES = ("lora_unet_", "lora_te_", "lora_te1_", "lora_te2_")
_DOWN = (".lora.down.weight", ".lora_A.weight", ".lora_down.weight",
         ".lora_linear_layer.down.weight")


class BadLoraFile(ValueError):
    """Not a usable style LoRA; ``code`` is one of ``not_safetensors``, ``no_lora``,
    ``other_model``."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


@dataclass(frozen=True)
class LoraFile:
    path: Path
    format: str  # "diffusers" | "kohya"
    tensors: int
    context_dim: int | None  # the cross-attention input width, when the file shows it


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
    found = LoraFile(path, fmt, len(keys), _context_dim(shapes))
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


def _context_dim(shapes: dict[str, list[int]]) -> int | None:
    """The in-features of a cross-attention key projection (attn2 to_k), if there is one."""
    for key, shape in shapes.items():
        flat = key.replace(".", "_")
        if "attn2_to_k" in flat and key.endswith(_DOWN) and len(shape) == 2:
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
