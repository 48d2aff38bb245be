"""The models of a training run: SDXL's parts, the LoRA on them, the optimizer, the loss.

Everything heavy is imported inside the functions, so that ``python -m lora.train`` on a
bad zip or a missing model fails in under a second. On several GPUs (``accelerate
launch``) every process trains on its own share of each epoch.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from .models import Resolved
from .train_config import TrainConfig
from .train_data import batches_per_epoch

log = logging.getLogger("borde.lora.train")

UNET_TARGETS = ["to_q", "to_k", "to_v", "to_out.0"]
TEXT_TARGETS = ["q_proj", "k_proj", "v_proj", "out_proj"]


@dataclass
class Parts:
    tokenizers: list[Any]
    text_encoders: list[Any]
    vae: Any
    unet: Any
    noise_scheduler: Any
    base: Resolved


def load_parts(base: Resolved) -> Parts:
    """The SDXL pieces training needs, all frozen, on the CPU in fp32."""
    from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
    from transformers import AutoTokenizer, CLIPTextModel, CLIPTextModelWithProjection

    kw = {"local_files_only": base.local}
    p = base.path
    parts = Parts(
        tokenizers=[
            AutoTokenizer.from_pretrained(p, subfolder="tokenizer", **kw),
            AutoTokenizer.from_pretrained(p, subfolder="tokenizer_2", **kw),
        ],
        text_encoders=[
            CLIPTextModel.from_pretrained(p, subfolder="text_encoder", **kw),
            CLIPTextModelWithProjection.from_pretrained(p, subfolder="text_encoder_2", **kw),
        ],
        vae=AutoencoderKL.from_pretrained(p, subfolder="vae", **kw),
        unet=UNet2DConditionModel.from_pretrained(p, subfolder="unet", **kw),
        noise_scheduler=DDPMScheduler.from_pretrained(p, subfolder="scheduler", **kw),
        base=base,
    )
    for m in [*parts.text_encoders, parts.vae, parts.unet]:
        m.requires_grad_(False)
    return parts


def add_lora(parts: Parts, cfg: TrainConfig) -> None:
    """PEFT LoRA on the attention projections; lora_B starts at zero, so step 0 = the base."""
    import torch
    from peft import LoraConfig, inject_adapter_in_model

    torch.manual_seed(cfg.seed)
    alpha = cfg.alpha or cfg.rank
    parts.unet.add_adapter(
        LoraConfig(
            r=cfg.rank, lora_alpha=alpha, init_lora_weights="gaussian", target_modules=UNET_TARGETS
        )
    )
    if cfg.train_text_encoder:
        # peft directly: transformers' own add_adapter wants a newer peft than we pin.
        for te in parts.text_encoders:
            inject_adapter_in_model(
                LoraConfig(r=cfg.rank, lora_alpha=alpha, init_lora_weights="gaussian",
                           target_modules=TEXT_TARGETS),
                te,
            )  # fmt: skip


def trainable_models(parts: Parts, cfg: TrainConfig) -> list[Any]:
    return [parts.unet, *(parts.text_encoders if cfg.train_text_encoder else [])]


def encode_prompts(parts: Parts, captions: list[str], device: str) -> tuple[Any, Any]:
    """SDXL conditioning: both encoders' penultimate states side by side, encoder 2's pooled."""
    import torch

    states, pooled = [], None
    for tok, te in zip(parts.tokenizers, parts.text_encoders, strict=True):
        ids = tok(
            captions,
            padding="max_length",
            max_length=tok.model_max_length,
            truncation=True,
            return_tensors="pt",
        ).input_ids
        out = te(ids.to(device), output_hidden_states=True)
        pooled = out[0]  # the projected text embedding for encoder 2
        states.append(out.hidden_states[-2])
    return torch.cat(states, dim=-1), pooled


# --- the run ----------------------------------------------------------------------------------


@dataclass
class Trainer:
    """What the loop works with, once accelerate has prepared it."""

    accelerator: Any
    parts: Parts
    models: list[Any]  # the ones that train, as accelerate wraps them
    params: list[Any]  # their LoRA parameters
    optimizer: Any
    lr_scheduler: Any
    noise_gen: Any  # latent samples, noise and timesteps: the one RNG of the loop
    device: str
    weight_dtype: Any
    total_steps: int

    @property
    def main(self) -> bool:
        return self.accelerator.is_main_process

    def unwrapped(self) -> list[Any]:
        return [self.accelerator.unwrap_model(m) for m in self.models]


def mixed_precision(cfg: TrainConfig) -> str:
    import torch

    mp = cfg.mixed_precision or ("fp16" if torch.cuda.is_available() else "no")
    if mp == "fp16" and not torch.cuda.is_available():
        log.warning("fp16 mixed precision needs a GPU; training in fp32 on the CPU")
        mp = "no"
    return mp


def prepare_trainer(cfg: TrainConfig, base: Resolved, slot_buckets: list[Any]) -> Trainer:
    """Accelerate, the frozen SDXL with a LoRA, AdamW and the LR schedule, on the device."""
    import torch
    from accelerate import Accelerator
    from diffusers.optimization import get_scheduler
    from diffusers.training_utils import cast_training_params

    cfg.mixed_precision = mp = mixed_precision(cfg)
    accelerator = Accelerator(mixed_precision=mp, gradient_accumulation_steps=cfg.grad_accum)
    device = str(accelerator.device)
    weight_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mp, torch.float32)

    parts = load_parts(base)
    add_lora(parts, cfg)
    models = trainable_models(parts, cfg)
    for m in [parts.unet, *parts.text_encoders]:
        m.to(device) if weight_dtype == torch.float32 else m.to(device, dtype=weight_dtype)
    parts.vae.to(device)  # fp32: SDXL's own VAE overflows in fp16
    if weight_dtype != torch.float32:
        cast_training_params(models, dtype=torch.float32)  # LoRA weights train in fp32
    if cfg.gradient_checkpointing:
        parts.unet.enable_gradient_checkpointing()
        if cfg.train_text_encoder:
            for te in parts.text_encoders:
                enable = getattr(te, "activation_checkpointing_enable", None)
                (enable or te.gradient_checkpointing_enable)()

    params = [p for m in models for p in m.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=1e-2)
    per_epoch = batches_per_epoch(slot_buckets, cfg.batch_size, accelerator.num_processes)
    total = cfg.max_steps or cfg.epochs * math.ceil(per_epoch / cfg.grad_accum)
    lr_scheduler = get_scheduler(
        cfg.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=cfg.lr_warmup_steps * accelerator.num_processes,
        num_training_steps=total * accelerator.num_processes,
    )
    prepared = accelerator.prepare(*models, optimizer, lr_scheduler)
    models, optimizer, lr_scheduler = list(prepared[: len(models)]), prepared[-2], prepared[-1]
    parts.unet = models[0]
    if cfg.train_text_encoder:
        parts.text_encoders = models[1:]
    noise_gen = torch.Generator().manual_seed(cfg.seed + accelerator.process_index)
    return Trainer(accelerator, parts, models, params, optimizer, lr_scheduler, noise_gen,
                   device, weight_dtype, total)  # fmt: skip


# --- one step ---------------------------------------------------------------------------------


def diffusion_loss(
    t: Trainer, dist: Any, emb: Any, pooled: Any, time_ids: list[list[int]],
    snr_gamma: float | None,
) -> Any:  # fmt: skip
    """Noise a latent sample, predict it back; epsilon or v-prediction, optional min-SNR.

    ``dist`` is a batch of VAE latent distributions (mean and log-variance), one bucket.
    """
    import torch
    import torch.nn.functional as F
    from diffusers.training_utils import compute_snr

    sched, gen, device, dtype = t.parts.noise_scheduler, t.noise_gen, t.device, t.weight_dtype
    pred_type = sched.config.prediction_type
    mean, logvar = dist.chunk(2, dim=1)
    std = torch.exp(0.5 * logvar.clamp(-30.0, 20.0))
    sample = mean + std * torch.randn(mean.shape, generator=gen)
    latents = (sample * t.parts.vae.config.scaling_factor).to(device, dtype)
    noise = torch.randn(latents.shape, generator=gen).to(device, dtype)
    steps = torch.randint(
        0, sched.config.num_train_timesteps, (len(latents),), generator=gen
    ).to(device)
    noisy = sched.add_noise(latents, noise, steps)
    add_time = torch.tensor(time_ids, dtype=torch.float32)
    with t.accelerator.autocast():
        pred = t.parts.unet(
            noisy,
            steps,
            emb.to(device, dtype),
            added_cond_kwargs={
                "text_embeds": pooled.to(device, dtype),
                "time_ids": add_time.to(device, dtype),
            },
        ).sample
    target = noise if pred_type == "epsilon" else sched.get_velocity(latents, noise, steps)
    if not snr_gamma:
        return F.mse_loss(pred.float(), target.float())
    snr = compute_snr(sched, steps)
    w = torch.stack([snr, snr_gamma * torch.ones_like(snr)], 1).min(1)[0]
    w = w / snr if pred_type == "epsilon" else w / (snr + 1)
    loss = F.mse_loss(pred.float(), target.float(), reduction="none")
    return (loss.mean(dim=(1, 2, 3)) * w).mean()


def optimizer_step(t: Trainer, loss: Any, max_grad_norm: float) -> None:
    t.accelerator.backward(loss)
    if t.accelerator.sync_gradients:
        t.accelerator.clip_grad_norm_(t.params, max_grad_norm)
    t.optimizer.step()
    t.lr_scheduler.step()
    t.optimizer.zero_grad(set_to_none=True)
