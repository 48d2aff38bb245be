"""`python -m vet.train` on a user's own folder-per-class layout, end to end (tiny)."""

from __future__ import annotations

import json

import numpy as np
import torch
from PIL import Image
from transformers import AutoModelForImageClassification


def test_train_on_folder_per_class_writes_a_loadable_model_and_report(tmp_path):
    import vet.modeling_efficientnet_lite  # noqa: F401 - registers the architecture
    from vet.train import assign_folds, collect, main

    rng = np.random.default_rng(0)
    data = tmp_path / "mine"
    for k, name in enumerate(["scab", "clean"]):
        (data / name).mkdir(parents=True)
        for i in range(9):
            base = np.full((72, 72, 3), (200, 60, 60) if k == 0 else (60, 160, 60), np.uint8)
            noise = rng.integers(0, 60, base.shape, dtype=np.uint8)
            Image.fromarray(base + noise).save(data / name / f"{name}_{i}.jpg")
    items = collect(data)
    assert len(items) == 18 and {it.label for it in items} == {"scab", "clean"}
    folds = assign_folds(items, 3)
    for f in range(3):  # every fold holds both classes: the split is stratified
        assert {it.label for it, g in zip(items, folds, strict=True) if g == f} == {"scab",
                                                                                   "clean"}
    rows = ["file,species,source_group,use"]  # licensed photos labelled by species only
    for k, sp in enumerate(["sheep", "chicken"]):
        for i in range(6):
            base = np.full((60, 90, 3), (230, 230, 220) if k == 0 else (150, 90, 40), np.uint8)
            Image.fromarray(base + rng.integers(0, 40, base.shape, dtype=np.uint8)).save(
                tmp_path / f"{sp}_{i}.jpg")
            rows.append(f"{sp}_{i}.jpg,{sp},{sp}{i},train")
    (tmp_path / "species.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "model"
    assert main([str(data), "-o", str(out), "--folds", "3", "--epochs", "2",
                 "--cache-dir", str(tmp_path / "cache"),
                 "--species", str(tmp_path / "species.csv"), "--serve-fit", "letterbox"]) == 0
    report = json.loads((out / "metrics.json").read_text())
    assert report["labels"] == ["clean", "scab"]
    assert 0.0 <= report["shipped"]["test_macro_f1"] <= 1.0
    assert (out / "README.md").read_text().count("held-out") >= 1
    model = AutoModelForImageClassification.from_pretrained(out, dtype=torch.float32).eval()
    assert model.config.answer_labels == ["clean", "scab"]
    with torch.inference_mode():
        o = model(pixel_values=torch.zeros(1, 3, 224, 224))
    assert o.logits.shape == (1, 2) and o.reference_logits.shape == (1, 1000)
    assert o.prototype_similarity is not None
    assert o.neighbour_share.shape == (1, 2) and float(o.neighbour_share.sum()) == 1.0
    # the species head: a distribution over the farm species, trained where photos exist
    assert o.species_probs.shape == (1, 8) and abs(float(o.species_probs.sum()) - 1) < 1e-3
    assert model.config.image_fit == "letterbox"
    head = report["shipped"]["species_head"]
    assert set(head["trained_on"]) == {"cow", "sheep", "chicken"}
    assert model.species_trained.tolist().count(1.0) == 3
    # The energy threshold is the validation photos' 5th percentile: the model's own
    # photos stay above it, and it reaches the triage through the config.
    from vet.imaging import load_image, to_tensor

    thr = model.config.energy_threshold
    assert np.isfinite(thr)
    with torch.inference_mode():
        o = model(pixel_values=to_tensor([load_image(it.path) for it in items]))
    energy = torch.logsumexp(o.logits.float(), -1).numpy()
    assert (energy >= thr - 0.05).mean() >= 0.8


def test_a_step_with_an_infinite_gradient_is_not_taken():
    """One inf gradient would make AdamW's weights NaN for the rest of the run."""
    from vet.train import finite_step

    w = torch.nn.Parameter(torch.ones(3))
    (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert finite_step(torch.tensor(0.5), [w])
    w.grad[1] = float("inf")
    assert not finite_step(torch.tensor(0.5), [w])
    w.grad[1] = 0.0
    assert not finite_step(torch.tensor(float("nan")), [w])


def test_turned_photos_are_cached_as_their_own_views_and_trained_on(tmp_path):
    """``--turns``: the frozen features of each photo turned a quarter either way are cached
    beside the plain ones (a turn, unlike a mirror, cannot be made on the feature map)."""
    from vet.train import main
    from vet.train_data import _turned, build_cache, collect

    rng = np.random.default_rng(1)
    data = tmp_path / "mine"
    for k, name in enumerate(["scab", "clean"]):
        (data / name).mkdir(parents=True)
        for i in range(9):  # a bar across the top: a turned photo is another picture
            img = np.full((64, 64, 3), 230, np.uint8)
            img[4:14, :] = (200, 40, 40) if k == 0 else (40, 140, 40)
            Image.fromarray(img + rng.integers(0, 20, img.shape, dtype=np.uint8)).save(
                data / name / f"{name}_{i}.jpg")
    items = collect(data)
    cache = tmp_path / "cache"
    plain, left = (build_cache(items, 11, 224, cache, "crop", turn) for turn in (0, 1))
    assert plain["feats"].shape == left["feats"].shape
    assert not torch.allclose(plain["feats"].float(), left["feats"].float(), atol=1e-2)
    assert not torch.allclose(left["feats"].float(), plain["feats"].float().rot90(1, (2, 3)),
                              atol=1e-2)
    first = Image.open(items[0].path)
    assert np.array_equal(np.asarray(_turned(_turned(first, 1), 3)), np.asarray(first))
    out = tmp_path / "model"
    assert main([str(data), "-o", str(out), "--folds", "3", "--epochs", "1", "--turns",
                 "--cache-dir", str(cache)]) == 0
    assert len(list(cache.glob("feats_*.pt"))) == 3  # plain, turned left, turned right
    assert json.loads((out / "metrics.json").read_text())["labels"] == ["clean", "scab"]
