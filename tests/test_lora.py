"""The lora package end to end, offline, on the tiny random SDXL (``lora.tiny``).

Everything goes through the same ``from_pretrained`` path a Hub id would; the Hub itself
is switched off (HF_HUB_OFFLINE=1), so a missing model must fail fast and clearly.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import ui_text
from lora.lora_file import BadLoraFile
from lora.models import ModelUnavailable
from ui_text import sayer

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(
    os.environ.get("BORDE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
PAGES = SHARED / "pages" / "ufal" / "DRAW"
SMALL = 64


@pytest.fixture(scope="module", autouse=True)
def offline_env():
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "LORA_BASE_MODEL", "LORA_WEIGHTS")}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.pop("LORA_BASE_MODEL", None)
    os.environ.pop("LORA_WEIGHTS", None)
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: one thread is faster on a shared 2-core box
    yield
    torch.set_num_threads(threads)
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from lora.tiny import build_tiny_sdxl

    return build_tiny_sdxl(tmp_path_factory.mktemp("models") / "tiny-sdxl")


def page_images(n: int = 3) -> list[Path]:
    found = sorted(PAGES.glob("*.jpg"))[:n]
    if len(found) < n:
        pytest.skip(f"needs {n} page images in {PAGES}")
    return found


def build_pdf(path: Path, images: list[Path]) -> Path:
    import pymupdf
    from PIL import Image

    doc = pymupdf.open()
    for img in images:
        with Image.open(img) as im:
            w, h = im.size
        page = doc.new_page(width=w * 72 / 150, height=h * 72 / 150)
        page.insert_image(page.rect, filename=str(img))
    doc.save(path)
    return path


@pytest.fixture(scope="module")
def dataset_zip(tmp_path_factory) -> Path:
    """A dataset zip made by the archive package from a PDF of real scanned pages."""
    from archive import build_dataset

    folder = tmp_path_factory.mktemp("dataset")
    pdf = build_pdf(folder / "pages.pdf", page_images(3))
    zip_path = folder / "pages.zip"
    report = build_dataset([pdf], zip_path, unit="page", filter="std", threshold=0, size=SMALL,
                           keep_duplicates=True)
    assert report.kept == 3
    return zip_path


def train(tiny: Path, zip_path: Path, out: Path, *extra: str) -> int:
    from lora.train import main

    args = [str(zip_path), "-o", str(out), "--base", str(tiny), "--resolution", str(SMALL),
            "--lr", "5e-2", "--rank", "4", "--alpha", "2", *extra]  # fmt: skip
    return main(args)


@pytest.fixture(scope="module")
def trained(tiny, dataset_zip, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("trained") / "lora"
    rc = train(tiny, dataset_zip, out, "--max-steps", "3", "--trigger", "imperial",
               "--validation-prompt", "a cat", "--validation-steps", "2")  # fmt: skip
    assert rc == 0
    return out


def pixels(image) -> np.ndarray:
    return np.asarray(image, dtype=np.int16)


# --- training -------------------------------------------------------------------------------


def test_dataset_zip_is_read_with_captions(dataset_zip):
    import io

    from PIL import Image

    from lora.dataset_zip import read_dataset_zip

    data = read_dataset_zip(dataset_zip)
    assert len(data.examples) >= 2
    assert all(e.name.startswith("images/") and e.caption for e in data.examples)
    with Image.open(io.BytesIO(data.examples[0].data)) as im:
        assert im.size == (SMALL, SMALL)
    assert data.caption_source["metadata.jsonl"] == len(data.examples)
    assert data.skipped["non-image members"] >= 1  # manifest.csv is not training data


def test_trained_lora_loads_back_and_changes_the_image(tiny, trained):
    import torch
    from diffusers import StableDiffusionXLPipeline

    assert (trained / "pytorch_lora_weights.safetensors").is_file()
    assert list((trained / "validation").glob("step-*.png"))
    card = (trained / "README.md").read_text()
    assert "**Trigger word:** imperial" in card and "**Steps trained:** 3" in card

    pipe = StableDiffusionXLPipeline.from_pretrained(tiny, local_files_only=True)
    pipe.set_progress_bar_config(disable=True)

    def run():
        g = torch.Generator().manual_seed(0)
        return pipe("imperial, a cat", num_inference_steps=2, height=SMALL, width=SMALL,
                    generator=g, output_type="np").images[0]  # fmt: skip

    before = run()
    pipe.load_lora_weights(trained)  # the folder, as a user would
    assert pipe.get_active_adapters()
    after = run()
    assert np.abs(after - before).max() > 1e-4


def test_lora_generate_uses_the_trained_lora(tiny, trained):
    import lora

    kw = {"base": str(tiny), "size": SMALL, "steps": 2, "seed": 3}
    plain = pixels(lora.generate("imperial, a cat", **kw))
    styled = pixels(lora.generate("imperial, a cat", lora=str(trained), lora_scale=1.0, **kw))
    assert np.abs(plain - styled).max() > 0


def test_kohya_copy_has_documented_keys_and_alpha(trained):
    from safetensors.torch import load_file

    kohya = load_file(str(trained / "lora_kohya.safetensors"))
    diffusers = load_file(str(trained / "pytorch_lora_weights.safetensors"))
    key = "lora_unet_down_blocks_1_attentions_0_transformer_blocks_0_attn1_to_q"
    assert f"{key}.lora_down.weight" in kohya and f"{key}.lora_up.weight" in kohya
    assert float(kohya[f"{key}.alpha"]) == 2.0  # --alpha 2, not the rank (4)
    modules = {k.rsplit(".", 2)[0] for k in kohya if k.endswith(".lora_down.weight")}
    assert len(modules) * 2 == len(diffusers)
    assert all(k.startswith("lora_unet_") for k in kohya)
    for m in modules:
        assert {f"{m}.lora_down.weight", f"{m}.lora_up.weight", f"{m}.alpha"} <= kohya.keys()
    src = "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q.lora.up.weight"
    assert kohya[f"{key}.lora_up.weight"].equal(diffusers[src])
    assert kohya[f"{key}.lora_down.weight"].shape[0] == 4  # rank


def test_resume_is_bit_for_bit(tiny, dataset_zip, tmp_path, capsys):
    from safetensors.torch import load_file

    straight, split = tmp_path / "straight", tmp_path / "split"
    assert train(tiny, dataset_zip, straight, "--max-steps", "4") == 0
    assert train(tiny, dataset_zip, split, "--max-steps", "2") == 0
    capsys.readouterr()
    assert train(tiny, dataset_zip, split, "--max-steps", "4", "--resume") == 0
    assert "at step 2" in capsys.readouterr().out
    a = load_file(str(straight / "pytorch_lora_weights.safetensors"))
    b = load_file(str(split / "pytorch_lora_weights.safetensors"))
    assert a.keys() == b.keys()
    assert all(a[k].equal(b[k]) for k in a)
    first = load_file(str(split / "checkpoints" / "checkpoint-000002" / "lora_params.safetensors"))
    assert any(
        not first[k].equal(v)
        for k, v in load_file(
            str(split / "checkpoints" / "checkpoint-000004" / "lora_params.safetensors")
        ).items()
    )


def test_latent_cache_trains_exactly_like_encoding_every_step(tiny, dataset_zip, tmp_path):
    from safetensors.torch import load_file

    plain, cached = tmp_path / "plain", tmp_path / "cached"
    assert train(tiny, dataset_zip, plain, "--max-steps", "2") == 0
    assert train(tiny, dataset_zip, cached, "--max-steps", "2", "--cache-latents") == 0
    a = load_file(str(plain / "pytorch_lora_weights.safetensors"))
    b = load_file(str(cached / "pytorch_lora_weights.safetensors"))
    assert all(a[k].equal(b[k]) for k in a)


def test_text_encoder_lora_with_accumulation_and_min_snr(tiny, dataset_zip, tmp_path):
    from diffusers import StableDiffusionXLPipeline
    from safetensors.torch import load_file

    out = tmp_path / "te"
    rc = train(tiny, dataset_zip, out, "--max-steps", "2", "--train-text-encoder",
               "--batch-size", "2", "--grad-accum", "2", "--snr-gamma", "5",
               "--gradient-checkpointing", "--cache-latents")  # fmt: skip
    assert rc == 0
    kohya = load_file(str(out / "lora_kohya.safetensors"))
    assert any(k.startswith("lora_te1_text_model_encoder_layers_0_self_attn_q_proj") for k in kohya)
    assert any(k.startswith("lora_te2_") for k in kohya)
    pipe = StableDiffusionXLPipeline.from_pretrained(tiny, local_files_only=True)
    pipe.load_lora_weights(out)
    assert any("lora_A" in n for n, _ in pipe.text_encoder.named_parameters())


def test_ctrl_c_saves_a_checkpoint_and_resume_finishes(tiny, dataset_zip, tmp_path, monkeypatch):
    import lora.train as lt
    from lora.checkpoints import checkpoint_dirs

    real = lt.micro_batches

    def interrupting(*args, **kwargs):
        for i, batch in enumerate(real(*args, **kwargs)):
            if i == 1:
                os.kill(os.getpid(), signal.SIGINT)  # as if the user pressed Ctrl-C
            yield batch

    monkeypatch.setattr(lt, "micro_batches", interrupting)
    out = tmp_path / "run"
    assert train(tiny, dataset_zip, out, "--max-steps", "50") == 130
    ckpts = checkpoint_dirs(out)
    assert ckpts and int(ckpts[-1].name[11:]) < 50
    assert not (out / "pytorch_lora_weights.safetensors").exists()
    monkeypatch.setattr(lt, "micro_batches", real)
    stopped = int(ckpts[-1].name[11:])
    assert train(tiny, dataset_zip, out, "--max-steps", str(stopped + 1), "--resume") == 0
    assert (out / "pytorch_lora_weights.safetensors").is_file()


def test_disk_full_keeps_the_previous_checkpoint(tiny, dataset_zip, tmp_path, monkeypatch, capsys):
    import torch

    real_save = torch.save

    def full_disk(obj, f, *a, **k):
        if "000004" in str(f):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(obj, f, *a, **k)

    monkeypatch.setattr(torch, "save", full_disk)
    out = tmp_path / "run"
    rc = train(tiny, dataset_zip, out, "--max-steps", "6", "--checkpoint-every", "2")
    err = capsys.readouterr().err
    assert rc == 1
    assert "disk is full" in err and "checkpoint-000002 is intact" in err
    kept = out / "checkpoints" / "checkpoint-000002"
    assert {p.name for p in kept.iterdir()} >= {"optimizer.pt", "rng.pt", "state.json"}
    assert not list((out / "checkpoints").glob(".tmp-*"))
    assert not (out / "checkpoints" / "checkpoint-000004").exists()


def test_center_crop_time_ids():
    import io

    from PIL import Image

    from lora.dataset_zip import Example
    from lora.train_data import place, prepare_image

    buf = io.BytesIO()
    Image.new("RGB", (100, 50), "white").save(buf, "PNG")
    sample = place(Example("a.png", "", buf.getvalue()), 64, buckets=False)
    assert sample.time_ids == [50, 100, 0, 32, 64, 64]
    px = prepare_image(sample)
    assert tuple(px.shape) == (3, 64, 64) and float(px.max()) == pytest.approx(1.0)


# --- unsafe zips ----------------------------------------------------------------------------


def _jpeg() -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), "grey").save(buf, "JPEG")
    return buf.getvalue()


def _zip_with(path: Path, info: zipfile.ZipInfo, data: bytes, method=zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", method) as zf:
        zf.writestr("images/ok_p00001.jpg", _jpeg())
        zf.writestr(info, data, compress_type=method)
    return path


def _symlink_info() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("images/link.jpg")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


UNSAFE = {
    "zip-slip": (lambda: zipfile.ZipInfo("images/../../escaped.jpg"), "zip-slip"),
    "absolute": (lambda: zipfile.ZipInfo("/tmp/borde_absolute_escape.jpg"), "absolute"),
    "symlink": (_symlink_info, "symbolic link"),
}


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("kind", [*UNSAFE, "bomb"])
def test_unsafe_zip_is_refused_and_nothing_is_written(kind, tiny, tmp_path, capsys):
    from lora.dataset_zip import UnsafeZip, read_dataset_zip

    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    if kind == "bomb":
        info = zipfile.ZipInfo("images/bomb.jpg")
        zpath = _zip_with(work / "bad.zip", info, b"\0" * (20 * 2**20), zipfile.ZIP_DEFLATED)
        reason = "zip bomb"
    else:
        make, reason = UNSAFE[kind]
        payload = b"/etc/passwd" if kind == "symlink" else _jpeg()
        zpath = _zip_with(work / "bad.zip", make(), payload)
    before = _tree(tmp_path)
    with pytest.raises(UnsafeZip, match=reason):
        read_dataset_zip(zpath)
    out = work / "out"
    assert train(tiny, zpath, out, "--max-steps", "1") == 2
    err = capsys.readouterr().err.strip()
    assert reason in err and len(err.splitlines()) == 1
    assert _tree(tmp_path) == before  # not even the output folder was created
    assert not Path("/tmp/borde_absolute_escape.jpg").exists()


def test_total_size_limit_and_non_images(tmp_path):
    from lora.dataset_zip import UnsafeZip, read_dataset_zip

    path = tmp_path / "d.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("images/a_p00001.jpg", _jpeg())
        zf.writestr("images/a_p00001.txt", "a caption")
        zf.writestr("images/payload.exe", b"MZ" * 100)
        zf.writestr("images/fake.jpg", b"not a jpeg at all")
    data = read_dataset_zip(path)
    assert [e.name for e in data.examples] == ["images/a_p00001.jpg"]
    assert data.examples[0].caption == "a caption"
    assert data.skipped == {"non-image members": 1, "unreadable images": 1}
    with pytest.raises(UnsafeZip, match="uncompressed"):
        read_dataset_zip(path, max_total_bytes=100)


# --- generation -----------------------------------------------------------------------------


def test_same_seed_same_image_other_seed_other_image(tiny):
    import lora

    kw = {"base": str(tiny), "size": SMALL, "steps": 2}
    a = pixels(lora.generate("a lighthouse", seed=11, **kw))
    b = pixels(lora.generate("a lighthouse", seed=11, **kw))
    c = pixels(lora.generate("a lighthouse", seed=12, **kw))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_png_metadata_round_trips_and_remakes_the_image(tiny, trained, tmp_path):
    from PIL import Image

    import lora
    from lora.generate import main

    first = tmp_path / "first.png"
    rc = main(["a lighthouse", "-o", str(first), "--base", str(tiny), "--lora", str(trained),
               "--lora-scale", "0.5", "--negative", "blurry", "--steps", "2", "--guidance", "3",
               "--size", str(SMALL), "--seed", "42"])  # fmt: skip
    assert rc == 0
    s = lora.read_settings(first)
    assert s["prompt"] == "a lighthouse" and s["negative_prompt"] == "blurry"
    assert (s["seed"], s["steps"], s["guidance"], s["width"]) == (42, 2, 3.0, SMALL)
    assert (s["base"], s["lora"], s["lora_scale"]) == (str(tiny), str(trained), 0.5)
    with Image.open(first) as im:
        assert "Seed: 42" in im.text["parameters"] and im.text["seed"] == "42"
    again = tmp_path / "again.png"
    assert main(["-o", str(again), "--from-png", str(first)]) == 0
    assert np.array_equal(pixels(Image.open(first)), pixels(Image.open(again)))


def test_few_step_stacks_two_adapters(tiny, trained):
    import lora

    # The trained LoRA stands in for the LCM-LoRA: no Hub here.
    img, s = lora.generate_with_settings(
        "a cat", base=str(tiny), lora=str(trained), few_step=True,
        few_step_lora=str(trained), size=SMALL, steps=20, seed=1,
    )  # fmt: skip
    assert s["few_step"] and s["scheduler"] == "LCMScheduler"
    assert s["steps"] == 8 and s["guidance"] == 1.0  # clamped to the few-step range
    assert img.size == (SMALL, SMALL)


def test_missing_base_is_a_clear_error(tmp_path, monkeypatch):
    import lora

    with pytest.raises(lora.ModelUnavailable, match="--base /path/to/folder"):
        lora.generate("x", base=str(tmp_path / "nowhere"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    with pytest.raises(lora.ModelUnavailable, match="HF_HUB_OFFLINE"):
        lora.generate("x", base="stabilityai/stable-diffusion-xl-base-1.0")


def test_cli_missing_base_exits_2_with_one_line(dataset_zip, tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    for module in ("lora.generate", "lora.train"):
        first = "a cat" if module == "lora.generate" else str(dataset_zip)
        proc = subprocess.run(
            [sys.executable, "-m", module, first, "-o", str(tmp_path / "o"), "--base",
             "stabilityai/stable-diffusion-xl-base-1.0"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 2, proc.stderr
        line = proc.stderr.strip()
        assert len(line.splitlines()) == 1
        assert "LORA_BASE_MODEL" in line and "python -m lora.tiny" in line


# --- UI helpers and estimates ---------------------------------------------------------------


def test_ui_helpers(tiny, trained, tmp_path, monkeypatch):
    from lora import ui

    monkeypatch.setenv("LORA_BASE_MODEL", str(tmp_path / "missing"))
    state = ui.model_state()
    assert not state.can_run and ui.status_keys(state) == ("lora_base_missing", "lora_style_none")
    monkeypatch.setenv("LORA_WEIGHTS", str(tmp_path / "no-lora"))
    state = ui.model_state()
    assert ui.status_keys(state)[1] == "lora_style_missing" and state.style == ""
    monkeypatch.setenv("LORA_BASE_MODEL", str(tiny))
    monkeypatch.setenv("LORA_WEIGHTS", str(trained))
    state = ui.model_state()
    assert state.can_run and ui.status_keys(state) == ("lora_base_local", "lora_style_ok")
    assert ui.choose_style(None, "", state) == str(trained)
    assert ui.choose_style(None, " owner/style-lora ", state) == "owner/style-lora"
    assert ui.choose_style("/up/x.safetensors", "owner/name", state) == "/up/x.safetensors"
    with pytest.raises(BadLoraFile) as bad:
        ui.choose_style(None, "not a hub id", state)
    assert ui.error_code(bad.value) == "file_bad_hub_id"
    assert ui.check_request("  ") == "prompt" and ui.check_request("a cat") is None

    args = ("p", "", 0.8, 30, 7.0, 1)
    small, big = ui.gpu_duration(*args, 512, False), ui.gpu_duration(*args, 1024, False)
    fast = ui.gpu_duration(*args, 1024, True)
    assert small < big and fast < big and small >= 20 and big <= 300

    image, caption = ui.generate_for_ui("a cat", "", 0.8, 2, 5.0, 7, SMALL, False)
    assert image.size == (SMALL, SMALL)
    assert "seed 7" in caption and trained.name in caption
    _, caption = ui.generate_for_ui("a cat", "", 0.8, 2, 5.0, 7, SMALL, False, lora="",
                                    say=sayer("es"))
    assert caption.startswith("semilla 7 · 2 pasos") and "sin LoRA de estilo" in caption
    with pytest.raises(ModelUnavailable) as missing:
        ui.generate_for_ui("a cat", "", 0.8, 2, 5.0, 7, SMALL, False, lora=str(tmp_path / "x"))
    assert ui.error_code(missing.value) == "style"
    monkeypatch.setenv("LORA_BASE_MODEL", str(tmp_path / "missing"))
    with pytest.raises(ModelUnavailable) as missing:
        ui.generate_for_ui("a cat", "", 0.8, 2, 5.0, 7, SMALL, False, lora="")
    assert ui.error_code(missing.value) == "base"


def test_a_style_lora_file_is_checked_from_its_header(tiny, trained, tmp_path):
    """The trainer's own files pass in both formats; a model, junk, or an SD 1.5 LoRA do not."""
    from lora import ui
    from lora.lora_file import inspect

    diffusers = inspect(trained / "pytorch_lora_weights.safetensors", tiny)
    kohya = inspect(trained / "lora_kohya.safetensors", tiny)
    assert (diffusers.format, kohya.format) == ("diffusers", "kohya")
    assert diffusers.context_dim == kohya.context_dim == 64  # the tiny SDXL's width
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"not a tensor file")
    sdxl = save_lora(tmp_path / "sdxl.safetensors", SDXL_KOHYA)  # 2048 wide: not the tiny's 64
    cases = {junk: "not_safetensors", save_lora(tmp_path / "sd15.safetensors", SD15_KOHYA):
             "other_base", sdxl: "other_model",
             tiny / "unet" / "diffusion_pytorch_model.safetensors": "no_lora"}
    for path, code in cases.items():
        with pytest.raises(BadLoraFile) as bad:
            inspect(path, tiny)
        assert bad.value.code == code, path
    assert inspect(sdxl).family == "SDXL"  # without a local base, the width is not compared
    with pytest.raises(BadLoraFile) as bad:
        ui.check_style_file(str(ROOT / "README.md"), base=str(tiny))
    assert bad.value.code == "wrong_name"
    assert words("en", ui.error_said(bad.value)).startswith(
        "This file's name does not end in .safetensors")
    assert 0 <= ui.random_seed() < 2**32 and ui.EXAMPLE_PROMPTS


def words(lang: str, said: tuple[str, dict]) -> str:
    """A kept sentence (``lora.ui.Said``) as the tab writes it."""
    key, fields = said
    return sayer(lang)(key, **fields)


# Real LoRA layouts, shrunk to rank 4: the names and widths each trainer writes.
ATTN2_K = "down_blocks_1_attentions_0_transformer_blocks_0_attn2_to_k"
SD15_KOHYA = {  # kohya-ss for SD 1.5: lora_te_ (one text encoder), cross-attention 768 wide
    f"lora_unet_{ATTN2_K}.lora_down.weight": (4, 768),
    f"lora_unet_{ATTN2_K}.lora_up.weight": (640, 4),
    "lora_te_text_model_encoder_layers_0_self_attn_k_proj.lora_down.weight": (4, 768),
}
SD15_DIFFUSERS = {  # diffusers' older attention-processor naming, SD 1.5
    "unet.down_blocks.0.attentions.0.transformer_blocks.0.attn2.processor.to_k_lora.down.weight":
        (4, 768),
    "unet.down_blocks.0.attentions.0.transformer_blocks.0.attn2.processor.to_k_lora.up.weight":
        (320, 4),
}
SD15_TEXT_ONLY = {"lora_te_text_model_encoder_layers_0_self_attn_k_proj.lora_down.weight":
                  (4, 768)}
SD2_KOHYA = {f"lora_unet_{ATTN2_K}.lora_down.weight": (4, 1024),
             f"lora_unet_{ATTN2_K}.lora_up.weight": (640, 4)}
SDXL_KOHYA = {  # kohya-ss for SDXL: LDM block names, te1 and te2, cross-attention 2048 wide
    "lora_unet_input_blocks_4_1_transformer_blocks_0_attn2_to_k.lora_down.weight": (4, 2048),
    "lora_unet_input_blocks_4_1_transformer_blocks_0_attn2_to_k.lora_up.weight": (640, 4),
    "lora_te1_text_model_encoder_layers_0_self_attn_k_proj.lora_down.weight": (4, 768),
    "lora_te2_text_model_encoder_layers_0_self_attn_k_proj.lora_down.weight": (4, 1280),
}
SDXL_DIFFUSERS = {  # PEFT naming as diffusers saves it; the UNet alone, so the width tells
    "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn2.to_k.lora_A.weight": (4, 2048),
    "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn2.to_k.lora_B.weight": (640, 4),
    "unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q.lora_A.weight": (4, 640),
}
FLUX_DIFFUSERS = {"transformer.single_transformer_blocks.0.attn.to_k.lora_A.weight": (4, 3072)}
SD3_DIFFUSERS = {"transformer.transformer_blocks.0.attn.to_k.lora_A.weight": (4, 1536)}


def save_lora(path: Path, shapes: dict[str, tuple[int, ...]]) -> Path:
    """A real safetensors file with these tensor names and shapes (small random values)."""
    import torch
    from safetensors.torch import save_file

    torch.manual_seed(0)
    tensors = {name: torch.randn(*shape) * 0.01 for name, shape in shapes.items()}
    for name in list(tensors):
        if name.endswith(".lora_down.weight"):
            tensors[name.replace(".lora_down.weight", ".alpha")] = torch.tensor(4.0)
    save_file(tensors, str(path), metadata={"format": "pt"})
    return path


@pytest.mark.parametrize("shapes, family", [
    (SD15_KOHYA, "SD 1.5"), (SD15_DIFFUSERS, "SD 1.5"), (SD15_TEXT_ONLY, "SD 1.5"),
    (SD2_KOHYA, "SD 2"), (FLUX_DIFFUSERS, "Flux")])
def test_a_lora_for_another_base_is_refused_saying_which(shapes, family, tmp_path):
    from lora import ui

    path = save_lora(tmp_path / "style.safetensors", shapes)
    with pytest.raises(BadLoraFile) as bad:
        ui.check_style_file(str(path))
    assert (bad.value.code, bad.value.fields) == ("other_base", {"family": family})
    said = ui.error_said(bad.value)
    assert words("en", said) == f"This LoRA was made for {family}; this tab needs an SDXL LoRA."
    assert words("es", said) == \
        f"Este LoRA se hizo para {family}; esta pestaña necesita un LoRA de SDXL."


def test_sdxl_loras_in_kohya_and_diffusers_naming_are_accepted(tmp_path):
    from lora import ui

    kohya = ui.check_style_file(str(save_lora(tmp_path / "k.safetensors", SDXL_KOHYA)))
    diffusers = ui.check_style_file(str(save_lora(tmp_path / "d.safetensors", SDXL_DIFFUSERS)))
    assert (kohya.format, kohya.family, kohya.context_dim) == ("kohya", "SDXL", 2048)
    assert (diffusers.format, diffusers.family, diffusers.context_dim) == \
        ("diffusers", "SDXL", 2048)
    with pytest.raises(BadLoraFile) as sd3:  # a transformer, not a UNet: not SDXL either
        ui.check_style_file(str(save_lora(tmp_path / "sd3.safetensors", SD3_DIFFUSERS)))
    assert sd3.value.code == "not_sdxl"


def test_a_text_file_named_safetensors_is_said_to_be_no_lora_not_a_wrong_name(tmp_path):
    from lora import lora_file, ui

    text = tmp_path / "x.safetensors"
    text.write_text("these are my notes about the engraving style\n", encoding="utf-8")
    with pytest.raises(BadLoraFile) as bad:
        ui.check_style_file(str(text))
    assert bad.value.code == "not_safetensors"
    said = ui.error_said(bad.value)
    assert words("en", said) == \
        "This file is not a LoRA in safetensors format (it could not be read as one)."
    assert words("es", said) == \
        "Este archivo no es un LoRA en formato safetensors (no se pudo leer como tal)."
    # every code has its own sentence in both languages, and only the name code talks names
    for lang in ("en", "es"):
        said = {code: ui_text.say(lang, f"lora_err_file_{code}", family="SD 1.5")
                for code in lora_file.CODES}
        assert len(set(said.values())) == len(lora_file.CODES)
        assert [c for c, w in said.items() if "termina" in w or "end in" in w] == ["wrong_name"]


# --- the base model, looked at once before any click ------------------------------------------


def test_base_check_of_folders_answers_at_once(tiny, tmp_path):
    import shutil
    import time

    from lora import ui
    from lora.models import check_base

    broken = tmp_path / "half-copied"
    shutil.copytree(tiny, broken, ignore=shutil.ignore_patterns("diffusion_pytorch_model*"))
    cases = {str(tiny): ("local", True), str(tmp_path / "nowhere"): ("missing", False),
             str(broken): ("broken", False), str(tiny / "unet"): ("broken", False)}
    for ref, (state, runs) in cases.items():
        t0 = time.perf_counter()
        found = ui.model_state(ref, "", timeout=1.0)
        assert time.perf_counter() - t0 < 1.0, ref
        assert (found.base_state, found.can_run) == (state, runs), ref
        assert check_base(ref, 1.0).state == state
    assert ui.status_keys(ui.model_state(str(broken), ""))[0] == "lora_base_broken"


def _check_elsewhere(refs: list[str], env: dict[str, str], timeout: float) -> list[dict]:
    """``ui.model_state`` for each ref in a fresh Python with ``env``: huggingface_hub reads
    HF_HUB_OFFLINE when it is imported, so the offline switch cannot flip in this process."""
    code = ("import json, sys, time\nfrom lora import ui\nfor ref in sys.argv[1:]:\n"
            "    t0 = time.perf_counter()\n"
            f"    s = ui.model_state(ref, '', timeout={timeout})\n"
            "    print(json.dumps({'state': s.base_state, 'gb': s.base_gb, 'can_run': s.can_run,"
            " 'key': ui.status_keys(s)[0], 's': time.perf_counter() - t0}))\n")
    clean = {k: v for k, v in os.environ.items()
             if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")}
    proc = subprocess.run([sys.executable, "-c", code, *refs], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env={**clean, "NO_PROXY": "127.0.0.1,localhost", **env})
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


SDXL_REPO_FILES = {  # stabilityai/stable-diffusion-xl-base-1.0's layout, sizes in bytes
    "model_index.json": 609, "sd_xl_base_1.0.safetensors": 6_938_078_334,
    "unet/config.json": 1_680, "unet/diffusion_pytorch_model.safetensors": 10_270_077_736,
    "unet/diffusion_pytorch_model.fp16.safetensors": 5_135_149_760,
    "text_encoder/model.safetensors": 492_265_168,
    "text_encoder/model.fp16.safetensors": 246_144_152,
    "text_encoder_2/model.safetensors": 2_778_702_264,
    "vae/diffusion_pytorch_model.safetensors": 334_643_268,
    "vae_1_0/diffusion_pytorch_model.safetensors": 334_643_268,
}


class FakeHub:
    """A Hub API on a loopback port: ``model_info`` for three repos, or no answer at all."""

    def __init__(self, silent: bool = False) -> None:
        import http.server
        import json
        import socket
        import threading

        self.silent = silent
        if silent:  # accepts the connection (the backlog does) and never says a word
            self.sock = socket.socket()
            self.sock.bind(("127.0.0.1", 0))
            self.sock.listen(8)
            self.port = self.sock.getsockname()[1]
            return
        repos = {"owner/sdxl": SDXL_REPO_FILES,
                 "owner/one-file": {"sd_xl_base_1.0.safetensors": 6_938_078_334}}

        class Api(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the http.server name
                repo = self.path.split("?")[0].removeprefix("/api/models/")
                if repo not in repos:
                    self.send_error(404)
                    return
                body = json.dumps({"id": repo, "siblings": [
                    {"rfilename": n, "size": s} for n, s in repos[repo].items()]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Api)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.silent:
            self.sock.close()
        else:
            self.server.shutdown()
            self.server.server_close()


def test_base_check_of_hub_ids_never_waits_past_its_timeout(tmp_path):
    from tests.e2e.harness import free_port

    sdxl = "stabilityai/stable-diffusion-xl-base-1.0"
    empty = {"HF_HOME": str(tmp_path / "hf")}  # nothing downloaded before
    offline, = _check_elsewhere([sdxl], {**empty, "HF_HUB_OFFLINE": "1"}, 3.0)
    assert (offline["state"], offline["key"], offline["can_run"]) == \
        ("missing", "lora_base_missing", False)
    assert offline["s"] < 3.0
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens: the connection is refused
    refused, = _check_elsewhere([sdxl], {**empty, "HF_ENDPOINT": closed}, 3.0)
    assert (refused["state"], refused["can_run"]) == ("missing", False)
    assert refused["s"] < 3.0
    hub = FakeHub(silent=True)
    try:
        silent, = _check_elsewhere([sdxl], {**empty, "HF_ENDPOINT": hub.url}, 1.0)
    finally:
        hub.close()
    assert silent["state"] == "missing" and 0.9 < silent["s"] < 2.0  # the bound, not a hang
    hub = FakeHub()
    try:
        answers = _check_elsewhere(["owner/sdxl", "owner/one-file", "owner/no-such-model"],
                                   {**empty, "HF_ENDPOINT": hub.url}, 3.0)
    finally:
        hub.close()
    assert [(a["state"], a["can_run"]) for a in answers] == \
        [("hub", True), ("broken", False), ("missing", False)]
    assert answers[0]["gb"] == 14  # the plain weights of the four parts, not fp16 or vae_1_0
    assert "about 14 GB" in ui_text.say("en", answers[0]["key"], base="owner/sdxl", base_gb=14)
    assert "unos 14 GB" in ui_text.say("es", answers[0]["key"], base="owner/sdxl", base_gb=14)


def test_estimate_warns_only_when_16_gb_is_not_enough():
    from lora import estimate

    t4 = estimate.Settings(gradient_checkpointing=True, cache_latents=True, steps=25_000)
    heavy = estimate.Settings(gradient_checkpointing=False, steps=25_000)
    assert "WARNING" not in estimate.report(t4, "cpu", "cpu")
    assert "WARNING" in estimate.report(heavy, "cpu", "cpu")
    # The anchor: 500 epochs of 50 images at ~2.7 s/step on a T4 is about 19 h.
    anchor = estimate.Settings(gradient_checkpointing=True, steps=25_000)
    assert 17 < estimate.t4_seconds_per_step(anchor) * 25_000 / 3600 < 21
