"""Bad inputs, the heatmap, the CLI and the model-missing message: never a traceback."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "vet" / "model"
needs_model = pytest.mark.skipif(not (SHIPPED / "config.json").is_file(),
                                 reason="no shipped model")


def photo(size=(240, 180)) -> Image.Image:
    """A textured colour image (not a flat colour, so the model has something to see)."""
    rng = np.random.default_rng(0)
    arr = (rng.random((size[1], size[0], 3)) * 80 + np.linspace(60, 170, size[0])[None, :, None])
    return Image.fromarray(arr.astype(np.uint8))


def png_claiming(width: int, height: int) -> bytes:
    """A valid tiny PNG whose header claims a huge size (a decompression bomb)."""
    buf = io.BytesIO()
    Image.new("L", (1, 1)).save(buf, "PNG")
    data = bytearray(buf.getvalue())
    ihdr = data[12:29]
    ihdr[4:12] = struct.pack(">II", width, height)
    data[12:29] = ihdr
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(ihdr)) & 0xFFFFFFFF)
    return bytes(data)


@pytest.fixture()
def bad_files(tmp_path):
    files = {}
    (tmp_path / "notes.jpg").write_text("this is not an image")
    files["non_image"] = tmp_path / "notes.jpg"
    buf = io.BytesIO()
    photo().save(buf, "JPEG", quality=90)
    (tmp_path / "truncated.jpg").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    files["truncated"] = tmp_path / "truncated.jpg"
    (tmp_path / "bomb.png").write_bytes(png_claiming(40_000, 40_000))
    files["bomb"] = tmp_path / "bomb.png"
    photo((20, 16)).save(tmp_path / "thumb.png")
    files["thumbnail"] = tmp_path / "thumb.png"
    (tmp_path / "empty.jpg").write_bytes(b"")
    files["empty"] = tmp_path / "empty.jpg"
    files["missing"] = tmp_path / "nope.jpg"
    return files


def test_each_bad_input_gets_a_reason_not_an_exception(bad_files):
    from vet.imaging import BadImage, load_image

    expect = {"non_image": "not an image", "truncated": "truncated", "bomb": "too large",
              "thumbnail": "too small", "empty": "empty", "missing": "not found"}
    for kind, path in bad_files.items():
        with pytest.raises(BadImage, match=expect[kind]):
            load_image(path)


def test_cmyk_16bit_and_exif_rotation_are_handled(tmp_path):
    from vet.imaging import load_image

    cmyk = tmp_path / "cmyk.jpg"
    photo().convert("CMYK").save(cmyk, "JPEG")
    assert load_image(cmyk).mode == "RGB"

    deep = tmp_path / "deep.png"
    arr = (np.linspace(0, 65535, 200 * 100).reshape(100, 200)).astype(np.uint16)
    Image.fromarray(arr).save(deep)
    assert Image.open(deep).mode.startswith("I")
    img = load_image(deep)
    assert img.mode == "RGB" and img.size == (200, 100)
    px = np.asarray(img)[:, :, 0]
    assert px.min() < 10 and px.max() > 245  # scaled from 16 bits, not clipped to white

    rotated = tmp_path / "rotated.jpg"
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to display"
    photo((240, 180)).save(rotated, "JPEG", exif=exif.tobytes())
    assert Image.open(rotated).size == (240, 180)
    assert load_image(rotated).size == (180, 240)


@needs_model
def test_triage_turns_bad_inputs_into_error_status(bad_files):
    from vet import triage_many

    results = triage_many(list(bad_files.values()), policy="keep")
    assert [t.status for t in results] == ["error"] * len(bad_files)
    assert all(t.reason and "not a diagnosis" in t.disclaimer["en"] for t in results)


@needs_model
def test_heatmap_has_the_photo_size_and_marks_some_region(tmp_path):
    from vet.heatmap import grad_cam, overlay
    from vet.model_io import holder

    img = photo((300, 200))
    with holder(str(SHIPPED), "release").use() as model:  # inside inference_mode, as in the app
        from vet.imaging import to_tensor

        top = int(model(pixel_values=to_tensor([img])).logits.argmax())
        cam, box = grad_cam(model, img, top)
    assert cam.min() >= 0.0 and cam.max() <= 1.0
    assert cam.max() - cam.min() > 0.1
    out = overlay(img, cam, box)
    assert out.size == img.size and out.mode == "RGB"
    assert np.abs(np.asarray(out, float) - np.asarray(img, float)).max() > 20


@needs_model
def test_a_wide_photos_heatmap_reaches_its_left_and_right_edges():
    """Two real lumpy-skin close-ups at the two ends of a 3:1 photo: the model sees the
    whole photo, so the map is warm at both ends (a centre crop would cut them off)."""
    import os

    from vet.heatmap import grad_cam, overlay
    from vet.imaging import load_image, to_tensor
    from vet.model_io import holder

    shared = (Path(os.environ.get("BORDE_SHARED_DATA") or ROOT.parent / "shared" / "data")
              / "livestock" / "conditions" / "lumpy_skin")
    if not shared.is_dir():
        pytest.skip("shared data not found")
    a = load_image(sorted(shared.glob("*.jpg"))[0]).resize((200, 200))
    wide = Image.new("RGB", (600, 200), (128, 128, 128))
    wide.paste(a, (0, 0))
    wide.paste(a.transpose(Image.Transpose.FLIP_LEFT_RIGHT), (400, 0))  # the same lesion
    with holder(str(SHIPPED), "release").use() as model:
        fit = model.config.image_fit
        size = model.config.image_size
        k = int(model(pixel_values=to_tensor([wide], size, fit)).logits.mean(0).argmax())
        cam, box = grad_cam(model, wide, k)
    assert box == (0, 0, 600, 200)  # the map covers the whole photo, edge to edge
    w = cam.shape[1]
    # The centre crop saw only the grey middle third; the whole photo shows both lesions.
    assert cam[:, : w // 3].max() > 0.3 and cam[:, -(w // 3):].max() > 0.3, (
        cam[:, : w // 3].max(), cam[:, -(w // 3):].max())
    out = np.abs(np.asarray(overlay(wide, cam, box), float) - np.asarray(wide, float))
    assert out[:, :200].max() > 20 and out[:, -200:].max() > 20


@needs_model
def test_cli_json_lines_parse(tmp_path, capsys):
    from vet.cli import main

    good = tmp_path / "a.jpg"
    photo().save(good)
    bad = tmp_path / "b.jpg"
    bad.write_text("nope")
    assert main([str(good), str(bad), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [d["file"] for d in lines] == [str(good), str(bad)]
    for d in lines:
        assert {"file", "status", "species", "condition", "confidence", "urgency", "top"} <= set(d)
    assert lines[1]["status"] == "error"
    assert lines[0]["status"] in ("ok", "uncertain", "not_livestock")
    assert main([str(good)]) == 0
    table = capsys.readouterr().out
    assert "result" in table.splitlines()[0] and "a.jpg" in table


# A real goat photo that the condition head calls healthy cattle (species validation split)
GOAT = "livestock/species/validation/goat/14000071163_7b24230c9b_t.jpg"


@needs_model
def test_cli_table_speaks_the_answers_language_every_word(capsys, shared_data):
    from vet.cli import main

    goat = shared_data / GOAT
    assert main([str(goat), "--lang", "es"]) == 0
    es = capsys.readouterr().out
    head, row = es.splitlines()[:2]
    assert head.split()[:3] == ["foto", "resultado", "especie"], head
    assert "No está seguro" in row and "puede no ser una vaca" in row, row
    for english in ("uncertain", "unknown", "healthy", "cattle", "cow", "top-3"):
        assert english not in es, (english, es)
    assert main([str(goat), "--lang", "en"]) == 0
    en = capsys.readouterr().out
    assert "Unsure" in en and "may not be a cow" in en and "resultado" not in en, en


def test_cli_bad_usage_exits_2_with_one_line():
    for args in ([], ["--bogus", "x.jpg"]):
        proc = subprocess.run([sys.executable, "-m", "vet", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "Traceback" not in proc.stderr


def test_missing_model_says_what_is_missing_and_how_to_fix(tmp_path, monkeypatch):
    from vet.model_io import VetModelError, holder, load_model

    empty = tmp_path / "nomodel"
    empty.mkdir()
    with pytest.raises(VetModelError, match="VET_MODEL") as info:
        load_model(str(empty))
    assert "config.json" in str(info.value)
    monkeypatch.setenv("VET_MODEL", str(empty))
    import vet.ui  # the app imports this without loading any model

    assert callable(vet.ui.triage_one_for_ui)
    with pytest.raises(VetModelError), holder(None, "release").use():
        pass
