"""One prepared GPU check (at most ~5 minutes): real-size SDXL with random weights.

    python bench/lora_gpu_check.py [--workdir /tmp/sdxl-check] [--budget-s 280]

No download: the UNet, VAE and both text encoders are built from the SDXL base 1.0
configs (written out below) with random weights, saved to disk in fp16 and then loaded
through the same code paths as a real checkpoint. It measures

1. peak VRAM and s/step of LoRA training at 1024 with the T4 settings
   (fp16, gradient checkpointing, cached latents, rank 8, batch 1), against the estimate,
   in the 1024x1024 bucket and in the 832x1216 one (a tall plate), each with the steady
   s/step after the first step;
2. time per 1024-px image, 30 steps, without a LoRA and with the fused LoRA
   (the LoRA just trained), pipeline already loaded; plus few-step (LCM path) and one
   cold request (load + run + release) through ``lora.generate``;
3. the archive's ``--captioner``: Salesforce/blip-image-captioning-base when it is in the
   local Hub cache, else a BLIP-base-size model of random weights, loaded and released
   through ``archive.captioner`` (fp16 on CUDA): load time, s/crop in batches of 16 on
   64 crops of 1024 px, peak VRAM, and the ZeroGPU duration it would ask for.

Random weights make noise (maybe NaNs in fp16): the timings and memory are what count.
Results go to stdout and, when $OUT is set, to $OUT/lora_gpu_check.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import traceback
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

T0 = time.perf_counter()
RESULTS: dict = {}

# stabilityai/stable-diffusion-xl-base-1.0, unet/config.json (the fields that matter)
UNET = dict(
    sample_size=128, in_channels=4, out_channels=4, layers_per_block=2,
    down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
    up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
    block_out_channels=(320, 640, 1280), attention_head_dim=(5, 10, 20),
    transformer_layers_per_block=(1, 2, 10), cross_attention_dim=2048,
    use_linear_projection=True, addition_embed_type="text_time", addition_time_embed_dim=256,
    projection_class_embeddings_input_dim=2816, norm_num_groups=32,
)  # fmt: skip
VAE = dict(
    in_channels=3, out_channels=3, latent_channels=4, layers_per_block=2, sample_size=1024,
    block_out_channels=(128, 256, 512, 512), down_block_types=("DownEncoderBlock2D",) * 4,
    up_block_types=("UpDecoderBlock2D",) * 4, scaling_factor=0.13025, force_upcast=True,
)  # fmt: skip
# CLIP ViT-L/14 and OpenCLIP ViT-bigG/14 text towers. Token ids come from lora.tiny's
# byte-level tokenizer (ids < 514), so bos/eos are set to its ids.
TEXT_1 = dict(hidden_size=768, intermediate_size=3072, num_attention_heads=12,
              num_hidden_layers=12, projection_dim=768, hidden_act="quick_gelu")  # fmt: skip
TEXT_2 = dict(hidden_size=1280, intermediate_size=5120, num_attention_heads=20,
              num_hidden_layers=32, projection_dim=1280, hidden_act="gelu")  # fmt: skip
TEXT_COMMON = dict(vocab_size=49408, max_position_embeddings=77, bos_token_id=512,
                   eos_token_id=513, pad_token_id=513, layer_norm_eps=1e-5)  # fmt: skip


def elapsed() -> float:
    return time.perf_counter() - T0


def section(name: str, budget_s: float):
    """Run one measurement; a failure is recorded, never fatal; skipped when out of time."""

    def wrap(fn):
        if elapsed() > budget_s:
            RESULTS[name] = {"skipped": f"out of time at {elapsed():.0f} s"}
            print(f"[{elapsed():6.1f}s] {name}: skipped (time)", flush=True)
            return None
        print(f"[{elapsed():6.1f}s] {name} ...", flush=True)
        try:
            RESULTS[name] = fn()
        except Exception as exc:  # noqa: BLE001 - report and carry on
            RESULTS[name] = {"error": f"{type(exc).__name__}: {exc}"}
            traceback.print_exc()
        print(f"[{elapsed():6.1f}s] {name}: {RESULTS[name]}", flush=True)
        return RESULTS[name]

    return wrap


def build_full_sdxl(folder: Path) -> dict:
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

    from lora.tiny import write_byte_level_clip_tokenizer

    torch.manual_seed(0)
    with torch.device("cuda"):  # random init on the GPU: seconds, not minutes
        unet = UNet2DConditionModel(**UNET).half()
        vae = AutoencoderKL(**VAE).half()
        te1 = CLIPTextModel(CLIPTextConfig(**TEXT_1, **TEXT_COMMON)).half()
        te2 = CLIPTextModelWithProjection(CLIPTextConfig(**TEXT_2, **TEXT_COMMON)).half()
    write_byte_level_clip_tokenizer(folder / "_tok")
    tok = CLIPTokenizer.from_pretrained(folder / "_tok")
    sched = EulerDiscreteScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
        timestep_spacing="leading", steps_offset=1,
    )  # fmt: skip
    pipe = StableDiffusionXLPipeline(
        vae=vae, text_encoder=te1, text_encoder_2=te2, tokenizer=tok, tokenizer_2=tok,
        unet=unet, scheduler=sched,
    )  # fmt: skip
    pipe.to("cpu")
    pipe.save_pretrained(folder)
    params = {n: sum(p.numel() for p in m.parameters()) / 1e9 for n, m in
              [("unet", unet), ("vae", vae), ("te1", te1), ("te2", te2)]}  # fmt: skip
    del pipe, unet, vae, te1, te2
    torch.cuda.empty_cache()
    size_gb = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e9
    return {"params_b": params, "disk_gb": round(size_gb, 2)}


def dataset_zip(path: Path, n: int = 2, size: tuple[int, int] = (1024, 1024)) -> Path:
    """``n`` noise images of ``size`` (w, h): a bucket size, so they train uncropped."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        rows = []
        for i in range(n):
            arr = rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
            buf = io.BytesIO()
            Image.fromarray(arr).save(buf, "JPEG", quality=90)
            name = f"images/check_p{i + 1:05d}.jpg"
            zf.writestr(name, buf.getvalue())
            rows.append(json.dumps({"file_name": name, "text": f"an engraving, page {i}"}))
        zf.writestr("metadata.jsonl", "\n".join(rows) + "\n")
    return path


def train_t4_settings(base: Path, work: Path, size: tuple[int, int] = (1024, 1024),
                      name: str = "lora") -> dict:  # fmt: skip
    """A few bucketed training steps at ``size`` with the T4 settings; the LoRA is kept."""
    import statistics

    from lora import estimate
    from lora.train import TrainConfig, train_lora

    w, h = size
    zip_path = dataset_zip(work / f"ds-{w}x{h}.zip", size=size)
    cfg = TrainConfig(
        datasets=[str(zip_path)], output_dir=str(work / name), base=str(base),
        resolution=1024, rank=8, max_steps=4, mixed_precision="fp16",
        gradient_checkpointing=True, cache_latents=True, lr=1e-4, buckets=True,
    )  # fmt: skip
    r = train_lora(cfg)
    est = estimate.vram_gb(estimate.Settings(gradient_checkpointing=True, cache_latents=True))
    steady = r.step_seconds[1:] or r.step_seconds
    card = (work / name / "README.md").read_text()
    return {
        "bucket": f"{w}x{h}",
        "bucket_in_model_card": f"| {w}x{h} |" in card,
        "peak_vram_mb_training_loop": r.peak_vram_mb,
        "estimate_vram_gb": round(est, 2),
        "s_per_step_incl_first": r.loop_seconds / max(r.steps_run, 1),
        "s_per_step_after_first": round(statistics.median(steady), 3) if steady else None,
        "step_seconds": [round(x, 3) for x in r.step_seconds],
        "fits_t4_16gb": bool(r.peak_vram_mb and r.peak_vram_mb < 15 * 1024),
        "lora_file": str(r.lora_file),
    }


def time_images(base: Path, lora_dir: Path | None, few_step: bool = False) -> dict:
    import torch

    from lora.pipeline import GenerateOptions, load_pipeline

    opts = GenerateOptions(
        prompt="a cyber-monocle in the style of an 1890 engraving", base=str(base),
        lora=str(lora_dir) if lora_dir else "", few_step=few_step,
        few_step_lora=str(lora_dir) if few_step else None, size=1024, seed=0,
        steps=6 if few_step else 30, device="cuda",
    ).validated()  # fmt: skip
    t0 = time.perf_counter()
    pipe = load_pipeline(opts, "cuda")
    load_s = time.perf_counter() - t0
    pipe.set_progress_bar_config(disable=True)

    def one(pipe, steps: int) -> float:
        torch.cuda.synchronize()
        t = time.perf_counter()
        pipe(opts.prompt, num_inference_steps=steps, guidance_scale=opts.guidance,
             width=1024, height=1024, generator=torch.Generator("cpu").manual_seed(0))  # fmt: skip
        torch.cuda.synchronize()
        return time.perf_counter() - t

    one(pipe, 2)  # warm-up: kernels, allocator
    torch.cuda.reset_peak_memory_stats()
    per_image = one(pipe, opts.steps)
    out = {"load_s": round(load_s, 2), "steps": opts.steps, "s_per_image": round(per_image, 2),
           "peak_vram_mb": round(torch.cuda.max_memory_allocated() / 2**20)}  # fmt: skip
    del pipe
    torch.cuda.empty_cache()
    return out


def cold_request(base: Path, lora_dir: Path) -> dict:
    """What a visitor waits for: load, fuse, 30 steps, release."""
    import lora
    from lora import pipeline

    t0 = time.perf_counter()
    _, s = lora.generate_with_settings("an engraving", base=str(base), lora=str(lora_dir),
                                       size=1024, steps=30, seed=1, device="cuda")  # fmt: skip
    total = time.perf_counter() - t0
    stats = next(reversed(pipeline._holders.values())).last_stats
    return {"total_s": round(total, 2), "device": s["device"],
            "holder": stats.summary() if stats else None}  # fmt: skip


def captioner_check(work: Path) -> dict:
    """The archive's captioner on the GPU, the real model when cached, else real-size random."""
    import numpy as np
    import torch
    from PIL import Image

    from archive import captioner
    from archive.tiny_captioner import SPECIAL, WORDS, build_tiny_captioner

    model = "Salesforce/blip-image-captioning-base"
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(model, local_files_only=True)
    except Exception:  # noqa: BLE001 - not cached (no network here): a real-size stand-in
        model = str(build_tiny_captioner(work / "blip-base-random", hidden=768, layers=12,
                                         heads=12, image_size=384, patch=16,
                                         extra_words=30522 - len(SPECIAL) - len(WORDS)))
    rng = np.random.default_rng(0)
    crops = []
    for _ in range(64):
        buf = io.BytesIO()
        Image.fromarray(rng.integers(0, 255, (1024, 768, 3), dtype=np.uint8)).save(buf, "JPEG")
        crops.append(buf.getvalue())
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    captions, device = captioner.caption_images(model, crops[:16], batch=16, device="cuda")
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    captions, device = captioner.caption_images(model, crops, batch=16, device="cuda")
    total = time.perf_counter() - t0
    return {"model": model, "device": device, "cold_16_crops_s": round(cold, 2),
            "64_crops_s_incl_load": round(total, 2), "s_per_crop": round(total / 64, 3),
            "peak_vram_mb": round(torch.cuda.max_memory_allocated() / 2**20),
            "zero_gpu_duration_asked_for_64": captioner.gpu_seconds(model, crops),
            "example": captions[0][:80]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workdir", default="/tmp/lora-gpu-check")
    p.add_argument("--budget-s", type=float, default=280)
    args = p.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: this check needs a GPU")
        return 1
    RESULTS["device"] = torch.cuda.get_device_name()
    RESULTS["torch"] = torch.__version__
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    base = work / "sdxl-random"
    b = args.budget_s
    section("build_full_size_sdxl", b)(lambda: build_full_sdxl(base))
    section("train_1024_t4_settings", b)(lambda: train_t4_settings(base, work))
    section("train_832x1216_bucket_t4_settings", b)(
        lambda: train_t4_settings(base, work, (832, 1216), "lora-832x1216")
    )
    lora_dir = work / "lora"
    has_lora = (lora_dir / "pytorch_lora_weights.safetensors").is_file()
    section("image_1024_30steps_no_lora", b)(lambda: time_images(base, None))
    if has_lora:
        section("image_1024_30steps_fused_lora", b)(lambda: time_images(base, lora_dir))
        section("image_1024_few_step_6steps", b)(lambda: time_images(base, lora_dir, True))
        section("cold_request_generate", b)(lambda: cold_request(base, lora_dir))
    section("archive_captioner", b + 60)(lambda: captioner_check(work))
    RESULTS["elapsed_s"] = round(elapsed(), 1)
    text = json.dumps(RESULTS, indent=1, default=str)
    print(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "lora_gpu_check.json").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
