"""The EfficientNet-Lite port: transformers round trip, TF padding, real ImageNet predictions."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from transformers import AutoConfig, AutoModelForImageClassification

from vet.modeling_efficientnet_lite import (
    EfficientNetLiteConfig,
    EfficientNetLiteForImageClassification,
    SameConv2d,
)

SHARED = Path(os.environ.get("BORDE_SHARED_DATA")
              or Path(__file__).resolve().parents[2] / "shared" / "data")
SHIPPED = Path(__file__).resolve().parents[1] / "vet" / "model"
needs_data = pytest.mark.skipif(
    not (SHARED / "livestock").is_dir(),
    reason=f"shared data not found at {SHARED} (set BORDE_SHARED_DATA)",
)

TINY = {"stem_channels": 8, "head_channels": 24, "stages": [[1, 3, 1, 1, 8, 8],
        [2, 3, 2, 2, 8, 12], [1, 5, 2, 2, 12, 16]]}


def tiny_model(**kw) -> EfficientNetLiteForImageClassification:
    torch.manual_seed(0)
    cfg = EfficientNetLiteConfig(num_labels=3, **TINY, **kw)
    return EfficientNetLiteForImageClassification(cfg).eval()


def test_tiny_random_model_round_trips_through_auto_classes(tmp_path):
    model = tiny_model(reference_branch_from=2, reference_labels=["a", "b", "c", "d", "e"])
    # Non-trivial BN statistics so a loader that ignored buffers would show.
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    assert AutoConfig.from_pretrained(tmp_path).model_type == "efficientnet_lite"
    loaded = AutoModelForImageClassification.from_pretrained(tmp_path).eval()
    assert type(loaded) is EfficientNetLiteForImageClassification
    x = torch.randn(2, 3, 67, 64)
    with torch.no_grad():
        a, b = model(pixel_values=x), loaded(pixel_values=x)
    assert a.logits.shape == (2, 3) and a.reference_logits.shape == (2, 5)
    torch.testing.assert_close(a.logits, b.logits)
    torch.testing.assert_close(a.reference_logits, b.reference_logits)


def test_same_padding_puts_the_extra_pixel_bottom_right_like_tensorflow():
    conv = SameConv2d(1, 1, 3, stride=2)
    torch.nn.init.normal_(conv.weight)
    x = torch.randn(1, 1, 8, 8)
    # TF "SAME" for k=3, s=2 on an even input: pad 0 before, 1 after.
    expected = F.conv2d(F.pad(x, [0, 1, 0, 1]), conv.weight, stride=2)
    torch.testing.assert_close(conv(x), expected)
    assert conv(torch.randn(1, 1, 7, 7)).shape[-1] == 4  # ceil(7 / 2)


def test_lite0_weights_load_strictly_with_relu6_and_bn_eps():
    from vet.convert import imagenet_model

    model = imagenet_model()
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bns and all(m.eps == 1e-3 for m in bns)
    assert any(isinstance(m, torch.nn.ReLU6) for m in model.modules())
    assert sum(p.numel() for p in model.parameters()) == 4_652_008


@needs_data
def test_port_top5_has_the_expected_imagenet_class_on_real_photos():
    from vet.convert import IMAGENET_LABELS, imagenet_model
    from vet.imaging import load_image, to_tensor

    fits = {"cow": {"ox", "water buffalo", "bison"}, "pig": {"pig", "wild boar", "warthog"},
            "chicken": {"cock", "hen"}, "sheep": {"ram", "bighorn sheep"}}
    model = imagenet_model()
    for species, names in fits.items():
        files = sorted((SHARED / "livestock/species/validation" / species).glob("*.jpg"))[:6]
        assert len(files) == 6
        with torch.inference_mode():
            probs = model(pixel_values=to_tensor([load_image(f) for f in files])).logits
        hits = sum(bool(names & {IMAGENET_LABELS[i] for i in row.topk(5).indices.tolist()})
                   for row in probs)
        assert hits >= 5, f"{species}: only {hits}/6 photos had {names} in the top-5"


@pytest.mark.skipif(not (SHIPPED / "config.json").is_file(), reason="no shipped model")
def test_shipped_checkpoint_keeps_the_imagenet_tail_and_fits_the_size_budget():
    from vet.convert import imagenet_model
    from vet.model_io import load_model

    size = sum(f.stat().st_size for f in SHIPPED.iterdir() if f.is_file())
    assert size <= 20 * 2**20
    shipped = load_model(str(SHIPPED))
    port = imagenet_model()
    x = torch.randn(2, 3, 224, 224).clamp(-1, 1)
    with torch.inference_mode():
        ref = shipped(pixel_values=x).reference_logits
        want = port(pixel_values=x).logits
    assert ref.shape == (2, 1000)
    # Stored in float16, so equal to the port up to half precision.
    assert (ref.argmax(-1) == want.argmax(-1)).all()
    assert float((ref.softmax(-1) - want.softmax(-1)).abs().max()) < 0.02


def test_the_vet_modules_import_one_way_only():
    """No import circle among vet's modules, counting imports inside functions too."""
    import ast

    root = Path(__file__).resolve().parents[1] / "vet"
    graph = {}
    for path in root.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("vet."):
                deps.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                deps |= {a.name.split(".")[1] for a in node.names if a.name.startswith("vet.")}
        graph[path.stem] = deps - {path.stem}

    def reaches(start: str, goal: str, seen: set) -> bool:
        for d in graph.get(start, ()):
            if d == goal or (d not in seen and reaches(d, goal, seen | {d})):
                return True
        return False

    circles = sorted(m for m in graph if reaches(m, m, set()))
    assert not circles, circles
