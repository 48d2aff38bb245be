"""How much VRAM and time a training run will take, said before it starts.

Rough by design (within ~30 %), calibrated on two anchors: about 2.7 s per
1024-px image step on a T4 (fp16, gradient checkpointing, no caching), and
SDXL LoRA training at 1024 fitting in about 11 GB with gradient checkpointing
and cached latents. Everything else scales from the model's own parameter
counts, the resolution and the batch size. The actual device is matched by
name, or else measured with a short matmul against a T4's ~10 effective TFLOPS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

SDXL_UNET_PARAMS = 2.567e9
T4_S_PER_STEP_1024 = 2.7
# What a T4 sustains in an SDXL LoRA step: ~27 TFLOP of work (forward, backward,
# recompute) in 2.7 s, i.e. ~10 TFLOPS; other devices are scaled against it.
T4_EFFECTIVE_TFLOPS = 10.0
FIT_GB = 15.0  # what a 16 GB card leaves for tensors
# Speed relative to a T4 for the same fp16 SDXL step (public benchmarks, rounded).
KNOWN_GPUS = {
    "h200": 11.0,
    "h100": 10.0,
    "a100": 6.0,
    "l40": 5.0,
    "4090": 5.0,
    "a6000": 3.5,
    "3090": 3.0,
    "a10": 2.4,
    "v100": 2.5,
    "l4": 1.8,
    "t4": 1.0,
    "p100": 0.6,
}


@dataclass(frozen=True)
class Settings:
    resolution: int = 1024
    batch_size: int = 1
    mixed_precision: str = "fp16"  # no | fp16 | bf16
    gradient_checkpointing: bool = False
    cache_latents: bool = False
    train_text_encoder: bool = False
    unet_params: float = SDXL_UNET_PARAMS
    text_encoder_params: float = 0.82e9
    vae_params: float = 0.084e9
    lora_params: float = 23e6 / 4  # rank 8 on SDXL's attention: ~5.8 M
    steps: int = 1


@dataclass(frozen=True)
class Estimate:
    device: str
    vram_gb: float
    s_per_step: float

    @property
    def hours(self) -> float:
        return self.s_per_step / 3600


def vram_gb(s: Settings) -> float:
    """Peak GB: frozen weights + LoRA with grads and Adam + activations + CUDA context."""
    wb = 4 if s.mixed_precision == "no" else 2
    area = (s.resolution / 1024) ** 2 * s.batch_size
    size = s.unet_params / SDXL_UNET_PARAMS
    weights = s.unet_params * wb
    if s.train_text_encoder:
        weights += s.text_encoder_params * wb
    if not s.cache_latents:
        weights += s.vae_params * wb + 1.5e9 * area * wb / 2  # the VAE encoder's activations
    lora = s.lora_params * (4 + 4 + 8)  # fp32 weight, grad, two Adam moments
    act = (3.0e9 if s.gradient_checkpointing else 15.0e9) * area * size * wb / 2
    if s.train_text_encoder:
        act += 0.5e9 * s.batch_size
    return (weights + lora + act) / 1e9 + 0.8


def t4_seconds_per_step(s: Settings) -> float:
    area = (s.resolution / 1024) ** 2 * s.batch_size
    t = T4_S_PER_STEP_1024 * area * s.unet_params / SDXL_UNET_PARAMS
    t *= 1.0 if s.gradient_checkpointing else 0.8  # recomputing costs ~25 %
    t *= 0.85 if s.cache_latents else 1.0  # no VAE encode per step
    t *= 1.15 if s.train_text_encoder else 1.0
    t *= 4.0 if s.mixed_precision == "no" else 1.0
    return t


def measured_tflops(device: str, dtype_name: str) -> float:
    """A 0.2-s matmul benchmark: what this device really does per second."""
    import torch

    dtype = torch.float32
    if device.startswith("cuda") and dtype_name in ("fp16", "bf16"):
        dtype = torch.float16 if dtype_name == "fp16" else torch.bfloat16
    n = 2048 if device.startswith("cuda") else 512
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    a @ b
    reps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.2:
        a @ b
        reps += 1
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return 2 * n**3 * reps / (time.perf_counter() - t0) / 1e12


def speed_vs_t4(device: str, device_name: str, dtype_name: str) -> float:
    low = device_name.lower()
    for key, rel in KNOWN_GPUS.items():
        if key in low:
            return rel
    return measured_tflops(device, dtype_name) / T4_EFFECTIVE_TFLOPS


def estimates(s: Settings, device: str, device_name: str) -> list[Estimate]:
    """T4, A100 and the actual device, in that order."""
    t4 = t4_seconds_per_step(s)
    vram = vram_gb(s)
    rows = [Estimate("T4 16 GB", vram, t4), Estimate("A100", vram, t4 / KNOWN_GPUS["a100"])]
    rel = speed_vs_t4(device, device_name, s.mixed_precision)
    if not device.startswith("cuda"):
        # The matmul benchmark already ran in fp32: scale the T4's fp16 time, not its fp32 one.
        t4 = t4_seconds_per_step(replace(s, mixed_precision="fp16"))
    rows.append(Estimate(f"this {device_name}", vram, t4 / max(rel, 1e-6)))
    return rows


def report(s: Settings, device: str, device_name: str) -> str:
    """The lines printed before training starts, with a warning when 16 GB is not enough."""
    lines = [
        f"estimate for {s.steps} steps at {s.resolution}px, batch {s.batch_size}, "
        f"{s.mixed_precision}, checkpointing {'on' if s.gradient_checkpointing else 'off'}, "
        f"latent cache {'on' if s.cache_latents else 'off'} (rough, +-30 %):"
    ]
    for e in estimates(s, device, device_name):
        vram = "n/a (CPU RAM)" if e.device.startswith("this cpu") else f"~{e.vram_gb:.1f} GB"
        total = e.s_per_step * s.steps
        when = f"{total / 3600:.1f} h" if total >= 3600 else f"{total / 60:.1f} min"
        lines.append(f"  {e.device:<24} VRAM {vram:<14} {e.s_per_step:8.3f} s/step  total {when}")
    if vram_gb(s) > FIT_GB:
        lines.append(
            f"WARNING: ~{vram_gb(s):.1f} GB will not fit in a 16 GB GPU (T4); try "
            "--gradient-checkpointing, --cache-latents, --mixed-precision fp16, "
            "or a smaller --resolution/--batch-size"
        )
    return "\n".join(lines)
