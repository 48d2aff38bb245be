"""Imperial LoRA: SDXL + a style LoRA, and training that LoRA from an archive dataset zip.

    import lora
    image = lora.generate("a cyber-monocle in the style of an 1890 engraving",
                          base="/models/sdxl", lora="/models/imperial-lora", seed=7)

CLIs: ``python -m lora.generate``, ``python -m lora.train``, ``python -m lora.tiny``.
Nothing here imports gradio or touches CUDA at import time.
"""

from .models import DEFAULT_BASE, DEFAULT_LCM_LORA, DEFAULT_VAE_FP16, ModelUnavailable
from .pipeline import GenerateOptions, generate, generate_with_settings, read_settings, save_png

__all__ = [
    "DEFAULT_BASE",
    "DEFAULT_LCM_LORA",
    "DEFAULT_VAE_FP16",
    "GenerateOptions",
    "ModelUnavailable",
    "generate",
    "generate_with_settings",
    "read_settings",
    "save_png",
]
