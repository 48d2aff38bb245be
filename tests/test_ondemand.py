from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

import pytest
import torch

import ondemand
from ondemand import OnDemand, rss_mb, with_cpu_fallback
from tests import tiny_models

ROOT = Path(__file__).resolve().parents[1]


def _vit_loader(folder: Path, counter: list[int] | None = None):
    from transformers import AutoModelForImageClassification

    def load(device: str):
        if counter is not None:
            counter.append(1)
        return AutoModelForImageClassification.from_pretrained(folder).to(device).eval()

    return load


def _classify(model) -> int:
    x = torch.rand(2, 3, 32, 32)
    return int(model(pixel_values=x).logits.argmax(-1)[0])


def test_fixtures_build_and_load_quickly(tmp_path):
    from diffusers import StableDiffusionXLPipeline
    from transformers import AutoModelForImageClassification

    t0 = time.perf_counter()
    cls_dir = tiny_models.build_image_classifier(tmp_path / "cls")
    sdxl_dir = tiny_models.build_sdxl(tmp_path / "sdxl")
    model = AutoModelForImageClassification.from_pretrained(cls_dir)
    pipe = StableDiffusionXLPipeline.from_pretrained(sdxl_dir)
    elapsed = time.perf_counter() - t0
    assert elapsed < 2.0, f"building and loading the tiny models took {elapsed:.2f}s"
    assert model.config.id2label[1] == "lumpy_skin"
    assert pipe.unet.config.addition_embed_type == "text_time"
    assert pipe.vae_scale_factor == 8
    ids = pipe.tokenizer("a cyber-monocle").input_ids
    assert ids[0] == pipe.tokenizer.bos_token_id and ids[-1] == pipe.tokenizer.eos_token_id
    assert len(set(ids)) > 5, "the byte-level tokenizer must tell characters apart"


def test_runs_under_inference_mode_and_releases(tiny_classifier_dir):
    loads: list[int] = []
    holder = OnDemand(_vit_loader(tiny_classifier_dir, loads), policy="release", name="vit")
    for _ in range(2):
        with holder.use() as model:
            assert torch.is_inference_mode_enabled()
            assert next(model.parameters()).device.type == "cpu"
            _classify(model)
    assert len(loads) == 2, "release policy must load afresh for every request"
    assert not holder.loaded
    stats = holder.last_stats
    assert stats is not None and stats.device == "cpu" and stats.load_s > 0
    assert stats.peak_rss_mb >= stats.rss_after_mb * 0.5


@pytest.mark.parametrize("policy", ["keep", "offload"])
def test_resident_policies_load_once(tiny_classifier_dir, policy):
    loads: list[int] = []
    holder = OnDemand(_vit_loader(tiny_classifier_dir, loads), policy=policy, name="vit")
    first = second = None
    with holder.use() as model:
        first = id(model)
    with holder.use() as model:
        second = id(model)
    assert len(loads) == 1 and first == second and holder.loaded
    assert holder.last_stats.cached
    holder.release()
    assert not holder.loaded


def test_logs_load_run_and_peak_memory(tiny_classifier_dir, caplog):
    holder = OnDemand(_vit_loader(tiny_classifier_dir), name="vit-log")
    with caplog.at_level(logging.INFO, logger="borde.ondemand"), holder.use() as model:
        _classify(model)
    line = next(r.getMessage() for r in caplog.records if "vit-log" in r.getMessage())
    assert "load" in line and "run" in line and "peak RSS" in line


def test_rss_stays_flat_over_30_release_cycles(tmp_path):
    # A model big enough (~25 MB of weights) that a leaked copy per cycle would show.
    folder = tiny_models.build_image_classifier(tmp_path / "vit", hidden=384, layers=4)
    holder = OnDemand(_vit_loader(folder), policy="release", name="vit-rss")
    rss = []
    for _ in range(30):
        with holder.use() as model:
            _classify(model)
        del model
        rss.append(rss_mb())
    growth = (rss[-1] - rss[0]) / rss[0]
    assert growth < 0.05, f"RSS grew {growth:.1%}: {rss[0]:.0f} MB -> {rss[-1]:.0f} MB"


def test_cpu_fallback_when_gpu_path_raises(tiny_classifier_dir):
    # On this CPU-only torch, asking for CUDA fails for real: that is the "no GPU" case.
    holder = OnDemand(_vit_loader(tiny_classifier_dir), name="vit-fallback")
    out = holder.run(_classify, device="cuda")
    assert out in range(4)
    assert holder.last_stats.device == "cpu"
    assert "running on the CPU" in (ondemand.last_fallback() or "")


def test_fallback_on_oom_and_quota_but_not_on_bugs():
    def oom():
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    def quota():
        raise RuntimeError("You have exceeded your GPU quota (60s requested vs. 12s left).")

    def bug():
        raise ValueError("shape mismatch")

    assert with_cpu_fallback(oom, lambda: "cpu") == "cpu"
    assert "out of memory" in ondemand.last_fallback()
    assert with_cpu_fallback(quota, lambda: "cpu") == "cpu"
    with pytest.raises(ValueError):
        with_cpu_fallback(bug, lambda: "cpu")


def test_failed_load_leaves_holder_clean(tiny_classifier_dir, tmp_path):
    calls: list[int] = []
    good = _vit_loader(tiny_classifier_dir)

    def flaky(device: str):
        calls.append(1)
        if len(calls) == 1:
            from transformers import AutoModelForImageClassification

            return AutoModelForImageClassification.from_pretrained(tmp_path / "missing")
        return good(device)

    holder = OnDemand(flaky, policy="keep", name="flaky")
    with pytest.raises(OSError), holder.use():
        pass
    assert not holder.loaded
    with holder.use() as model:
        assert _classify(model) in range(4)


def test_release_policy_gives_each_concurrent_request_its_own_copy(tiny_classifier_dir):
    holder = OnDemand(_vit_loader(tiny_classifier_dir), policy="release", name="vit-conc")
    seen: list[int] = []
    barrier = threading.Barrier(2)

    def request():
        with holder.use() as model:
            barrier.wait(timeout=30)  # both requests hold a model at the same time
            seen.append(id(model))
            _classify(model)

    threads = [threading.Thread(target=request) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(set(seen)) == 2


def test_shared_policy_serialises_requests(tiny_classifier_dir):
    holder = OnDemand(_vit_loader(tiny_classifier_dir), policy="keep", name="vit-lock")
    active, overlap = [0], [False]

    def request():
        with holder.use() as model:
            active[0] += 1
            overlap[0] |= active[0] > 1
            time.sleep(0.05)
            _classify(model)
            active[0] -= 1

    threads = [threading.Thread(target=request) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not overlap[0]


def test_gpu_decorator_is_a_no_op_without_zerogpu():
    def handler(steps: int) -> int:
        return steps

    assert ondemand.gpu(duration=lambda steps: steps * 2)(handler) is handler


def test_gpu_decorator_passes_a_computed_duration(monkeypatch):
    seen: dict[str, object] = {}

    def fake_gpu(duration):
        seen["duration"] = duration

        def wrap(fn):
            return fn

        return wrap

    monkeypatch.setattr(ondemand, "zero_gpu_enabled", lambda: True)
    monkeypatch.setitem(sys.modules, "spaces", types.SimpleNamespace(GPU=fake_gpu))

    def handler(steps: int, size: int) -> str:
        return "ok"

    ondemand.gpu(duration=lambda steps, size: steps * size / 1024)(handler)
    assert seen["duration"](30, 2048) == 60


def test_nothing_touches_cuda_at_import():
    code = (
        "import torch\n"
        "def boom(*a, **k):\n"
        "    raise SystemExit('CUDA touched at import time')\n"
        "torch.cuda.is_available = boom\n"
        "torch.cuda.init = boom\n"
        "torch.cuda._lazy_init = boom\n"
        "torch.cuda.device_count = boom\n"
        "import ondemand, vet, archive, lora\n"
        "import app\n"
        "app.build_app()\n"
        "print('clean')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=240
    )
    assert out.returncode == 0 and "clean" in out.stdout, out.stderr[-2000:]
