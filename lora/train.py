"""Train a style LoRA for SDXL from archive dataset zips.

    python -m lora.train plates.zip vignettes.zip -o out/imperial \\
        --base stabilityai/stable-diffusion-xl-base-1.0 --repeats 1 3 \\
        --resolution 1024 --rank 8 --max-steps 2000 --mixed-precision fp16 \\
        --gradient-checkpointing --cache-latents --checkpoint-every 250 --trigger imperial

``accelerate launch -m lora.train ...`` spreads it over several GPUs. The steps, in order,
each in its own module:

1. read the zips safely, in memory, and place every image in its aspect-ratio bucket
   (:mod:`lora.dataset_zip`, :mod:`lora.train_data`);
2. load the SDXL parts and put a PEFT LoRA on the UNet attention (``to_q``, ``to_k``,
   ``to_v``, ``to_out.0``), and on both text encoders with ``--train-text-encoder``
   (:mod:`lora.train_models`);
3. print a VRAM and time estimate (T4, A100, this device), with a warning past 16 GB;
4. cache text embeddings (unless the text encoders train) and, with ``--cache-latents``,
   the VAE's latent distributions, per bucket; both caches live in memory, never on disk;
5. train: batches of one bucket, SDXL's time ids (original size, crop top-left, bucket),
   epsilon/v-prediction loss, optional min-SNR weighting, tqdm with loss and s/it;
6. checkpoint every N steps, at the end and on Ctrl-C (:mod:`lora.checkpoints`: a full
   disk leaves the previous checkpoint intact); ``--resume`` continues bit-for-bit;
7. write ``pytorch_lora_weights.safetensors`` (diffusers), ``lora_kohya.safetensors``
   (kohya keys) and a ``README.md`` model card (:mod:`lora.train_outputs`).

Exit codes: 0 done, 2 bad input or missing model, 1 a checkpoint could not be written,
130 stopped by Ctrl-C after saving a checkpoint.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .checkpoints import CheckpointError, StopFlag, load_checkpoint, resume_point, save_checkpoint
from .dataset_zip import UnsafeZip
from .models import ModelUnavailable, base_from_env, resolve
from .train_config import TrainConfig, build_parser, config_from_args
from .train_data import (
    Captions,
    LatentCache,
    TextCache,
    TrainingSet,
    load_training_set,
    micro_batches,
)
from .train_models import Trainer, diffusion_loss, encode_prompts, optimizer_step, prepare_trainer
from .train_outputs import KOHYA_FILE, LORA_FILE, save_lora, validate, write_model_card

__all__ = ["LORA_FILE", "KOHYA_FILE", "CheckpointError", "Result", "TrainConfig", "train_lora"]


@dataclass
class Result:
    output_dir: Path
    steps: int
    final_loss: float | None
    interrupted: bool
    lora_file: Path | None
    loop_seconds: float = 0.0  # the training loop alone: no loading, caching or saving
    peak_vram_mb: float | None = None  # during the training loop, on CUDA
    step_seconds: list[float] = field(default_factory=list)  # each step of this call

    @property
    def steps_run(self) -> int:
        """Steps done by this call (not counting resumed ones)."""
        return len(self.step_seconds)


def train_lora(cfg: TrainConfig) -> Result:
    """Train (or resume) and write the LoRA, the kohya copy and the model card."""
    cfg = cfg.validated()
    cfg.base = cfg.base or base_from_env()
    base = resolve(cfg.base)
    # Bad zips and a wrong --resume fail here, in under a second, before anything heavy.
    data = load_training_set(cfg.datasets, cfg.resolution, cfg.buckets, cfg.repeats)
    resume_from = resume_point(cfg)
    out = Path(cfg.output_dir)

    from tqdm.auto import tqdm

    t = prepare_trainer(cfg, base, data.slot_buckets())
    total = t.total_steps
    out.mkdir(parents=True, exist_ok=True)
    start = restore(t, resume_from) if resume_from else 0
    if start >= total:
        print(f"already at step {start} of {total}; nothing to train")
    if t.main:
        print_plan(t, cfg, data, start)

    captions = Captions.of(data, cfg.trigger, cfg.caption_dropout, cfg.shuffle_tags, cfg.seed)
    texts = None if cfg.train_text_encoder else text_cache(t, captions, cfg.shuffle_tags)
    latents = latent_cache(t, data, cfg.cache_latents)
    micro = start * cfg.grad_accum  # micro-batches drawn so far: the data's only state
    batches = micro_batches(data.slot_buckets(), cfg.batch_size, micro, cfg.seed,
                            t.accelerator.process_index, t.accelerator.num_processes)  # fmt: skip
    step, loss_value, stopped, times = start, None, False, []
    for m in t.models:
        m.train()

    bar = tqdm(total=total, initial=start, unit="step", desc="training", disable=not t.main)
    reset_peak_vram(t)
    with StopFlag() as flag:
        t_last = t_loop = time.perf_counter()
        while step < total:
            samples = [data.slots[s] for s in next(batches)]
            with t.accelerator.accumulate(*t.models):
                emb, pooled = conditioning(t, texts, captions.for_batch(samples, micro))
                dist = latents.stack(samples)
                time_ids = [data.samples[i].time_ids for i in samples]
                loss = diffusion_loss(t, dist, emb, pooled, time_ids, cfg.snr_gamma)
                optimizer_step(t, loss, cfg.max_grad_norm)
            micro += 1
            if not t.accelerator.sync_gradients:
                continue
            step += 1
            loss_value, now = float(loss.detach()), time.perf_counter()
            times.append(now - t_last)
            w, h = data.samples[samples[0]].bucket
            bar.set_postfix(loss=f"{loss_value:.4f}", s_it=f"{now - t_last:.2f}",
                            bucket=f"{w}x{h}")  # fmt: skip
            bar.update(1)
            t_last = now
            if every(cfg.checkpoint_every, step, total):
                checkpoint(t, out, step, cfg)
            if cfg.validation_prompt and t.main and every(cfg.validation_every, step, total):
                validation_image(t, cfg, step, out)
            if flag.stop:
                stopped = True
                break
    bar.close()
    loop_s, peak = time.perf_counter() - t_loop, peak_vram_mb(t)
    checkpoint(t, out, step, cfg)
    result = Result(out, step, loss_value, stopped, None, loop_s, peak, times)
    if stopped:
        print(f"stopped at step {step}; checkpoint saved, continue with --resume")
        return result
    if t.main:
        result.lora_file = write_outputs(t, cfg, data, out, step, loss_value)
    t.accelerator.end_training()
    return result


# --- the loop's helpers, in the order it calls them -------------------------------------------


def restore(t: Trainer, checkpoint_dir: Path) -> int:
    """Weights, optimizer, schedule and RNG states from a checkpoint; returns its step."""
    step = load_checkpoint(checkpoint_dir, t.unwrapped(), t.optimizer, t.lr_scheduler,
                           t.noise_gen, t.accelerator.scaler)  # fmt: skip
    print(f"resuming from {checkpoint_dir} at step {step}")
    return step


def print_plan(t: Trainer, cfg: TrainConfig, data: TrainingSet, start: int) -> None:
    """The data, its buckets, and the VRAM and time estimate, before the first step."""
    import torch

    from . import estimate

    name = torch.cuda.get_device_name() if t.device.startswith("cuda") else "cpu"
    print(data.summary())
    if cfg.buckets:
        print("buckets: " + ", ".join(f"{w}x{h}: {n}" for (w, h), _, n in data.histogram()))
    parts = t.parts
    settings = estimate.Settings(
        resolution=cfg.resolution,
        batch_size=cfg.batch_size,
        mixed_precision=cfg.mixed_precision or "no",
        gradient_checkpointing=cfg.gradient_checkpointing,
        cache_latents=cfg.cache_latents,
        train_text_encoder=cfg.train_text_encoder,
        unet_params=sum(p.numel() for p in parts.unet.parameters()),
        text_encoder_params=sum(p.numel() for te in parts.text_encoders for p in te.parameters()),
        vae_params=sum(p.numel() for p in parts.vae.parameters()),
        lora_params=sum(p.numel() for p in t.params),
        steps=max(t.total_steps - start, 0),
    )
    print(estimate.report(settings, t.device, name))


def text_cache(t: Trainer, captions: Captions, shuffled: bool) -> TextCache:
    """Embeddings of every caption a step can see; the encoders then leave the device,
    unless shuffled tags make new captions to encode."""
    import torch

    def encode(caption: str) -> tuple[Any, Any]:
        with torch.no_grad():
            emb, pooled = encode_prompts(t.parts, [caption], t.device)
        return emb[0].float().cpu(), pooled[0].float().cpu()

    cache = TextCache(encode, captions.distinct())
    if not shuffled:
        for te in t.parts.text_encoders:  # kept on the CPU for validation images only
            te.to("cpu")
    return cache


def latent_cache(t: Trainer, data: TrainingSet, keep: bool) -> LatentCache:
    """Latent distributions per image at its bucket's size; with ``keep``, all encoded now."""
    import torch

    def encode(pixels: Any) -> Any:
        with torch.no_grad():
            dist = t.parts.vae.encode(pixels.unsqueeze(0).to(t.device)).latent_dist
        return dist.parameters[0].cpu()

    cache = LatentCache(data.samples, encode, keep)
    if keep:
        from tqdm.auto import tqdm

        per_bucket = cache.fill(lambda it: tqdm(it, desc="caching latents", disable=not t.main))
        if t.main:
            n = len(per_bucket)
            print(f"cached {sum(per_bucket.values())} latents in {n} bucket{'s' * (n > 1)}")
        t.parts.vae.to("cpu")  # only the decoder is needed again, for validation images
    return cache


def conditioning(t: Trainer, texts: TextCache | None, captions: list[str]) -> tuple[Any, Any]:
    """Text embeddings and pooled embeddings for a batch: cached, or encoded when training."""
    if texts is None:
        return encode_prompts(t.parts, captions, t.device)
    return texts(captions)


def every(n: int, step: int, total: int) -> bool:
    """Every ``n`` steps (0: never), but not at the last step, which saves anyway."""
    return bool(n) and step % n == 0 and step < total


def checkpoint(t: Trainer, out: Path, step: int, cfg: TrainConfig) -> None:
    t.accelerator.wait_for_everyone()
    if t.main:
        save_checkpoint(out, step, t.unwrapped(), t.optimizer, t.lr_scheduler, t.noise_gen, cfg,
                        t.accelerator.scaler)  # fmt: skip


def validation_image(t: Trainer, cfg: TrainConfig, step: int, out: Path) -> Path:
    return validate(t.parts, cfg, step, t.device, t.weight_dtype, t.accelerator.unwrap_model, out)


def write_outputs(t: Trainer, cfg: TrainConfig, data: TrainingSet, out: Path, step: int,
                  loss: float | None) -> Path:  # fmt: skip
    lora_file = save_lora(out, t.parts, cfg, t.accelerator.unwrap_model, data)
    if cfg.validation_prompt:
        validation_image(t, cfg, step, out)
    write_model_card(out, cfg, data, step, loss)
    (out / "train_config.json").write_text(json.dumps(cfg.record(), indent=1))
    print(f"wrote {lora_file}, {out / KOHYA_FILE} and {out / 'README.md'}")
    return lora_file


def reset_peak_vram(t: Trainer) -> None:
    import torch

    if t.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def peak_vram_mb(t: Trainer) -> float | None:
    import torch

    if not t.device.startswith("cuda"):
        return None
    peak = torch.cuda.max_memory_allocated() / 2**20
    if t.main:
        print(f"peak VRAM during training: {peak:.0f} MB")
    return peak


# --- CLI --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = build_parser(__doc__.split("\n")[0]).parse_args(argv)
    try:
        result = train_lora(config_from_args(args))
    except (ModelUnavailable, UnsafeZip, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("stopped without a new checkpoint (second Ctrl-C)", file=sys.stderr)
        return 130
    return 130 if result.interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
