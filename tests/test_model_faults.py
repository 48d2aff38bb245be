"""A model that cannot load gives a clear message, and the next request works again."""

from __future__ import annotations

import shutil

import pytest

import app
from ondemand import OnDemand

ROOT = app.Path(app.__file__).resolve().parent


def _corrupt_copy(src, dst):
    shutil.copytree(src, dst)
    weights = dst / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 3])
    return dst


def test_holder_recovers_after_a_corrupt_safetensors(tiny_classifier_dir, tmp_path):
    from transformers import AutoModelForImageClassification

    bad = _corrupt_copy(tiny_classifier_dir, tmp_path / "bad")
    folders = [bad, tiny_classifier_dir]

    def load(device: str):
        return AutoModelForImageClassification.from_pretrained(folders.pop(0)).to(device)

    holder = OnDemand(load, policy="keep", name="faulty")
    with pytest.raises(Exception), holder.use():  # noqa: B017 - any loader error
        pass
    assert not holder.loaded, "no half-loaded model may stay in the holder"
    with holder.use() as model:
        assert model.config.num_labels == 4
    assert holder.loaded


@pytest.mark.parametrize("kind", ["missing", "corrupt"])
def test_vet_tab_says_what_is_wrong_then_works_again(kind, shared_data, tmp_path, monkeypatch):
    photo = next((shared_data / "livestock" / "conditions" / "pinkeye").glob("*.jpg"))
    if kind == "missing":
        target = tmp_path / "no-such-model"
    else:
        target = _corrupt_copy(ROOT / "vet" / "model", tmp_path / "corrupt-model")
    monkeypatch.setenv("VET_MODEL", str(target))
    label, badge, advice, heatmap = app.vet_run(str(photo), "en")
    # one plain sentence, no error badge on the boxes; the detail goes to the log
    assert label is None and badge == "" and heatmap["visible"] is False
    assert "could not be loaded" in advice and "VET_MODEL" in advice
    assert "safetensors" not in advice and "config.json" not in advice
    monkeypatch.delenv("VET_MODEL")
    label, badge, advice, heatmap = app.vet_run(str(photo), "en")
    assert label and "not a diagnosis" in advice and heatmap["value"] is not None
