"""lora.train on figure crops of every shape: buckets, several zips, captions, the split.

The zips are built like the archive's figure-crop zips (``images/<stem>_p00012_f1.jpg``,
``metadata.jsonl`` with ``source, page, bbox, score, kind``, ``regions.csv`` and a
``candidates/`` folder that must not be trained on), from real woodcut regions of the
Moreno chapbooks in the shared data (``figures/moreno/regions.csv``, CC BY-SA 4.0).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest

from tests.test_lora import offline_env  # noqa: F401 - the same offline, one-thread setup

# Real figure regions: name -> (page image, aspect class). Ratios 0.42, 0.62, 0.99, 1.45, 9.1.
CROPS = {
    "portrait": "Moreno_125_1.jpg",
    "tall": "Moreno_133_1.jpg",
    "square": "Moreno_129_1.jpg",
    "landscape": "Moreno_121_1.jpg",
    "strip": "Moreno_142_1.jpg",  # a 9:1 printer's rule: beyond 4:1
}
LONG_SIDE = 300  # crops are scaled to this long side: small, still several buckets apart


def moreno_regions(shared: Path) -> dict[str, list[tuple[int, int, int, int]]]:
    boxes: dict[str, list[tuple[int, int, int, int]]] = {}
    with open(shared / "figures" / "moreno" / "regions.csv", newline="") as fh:
        for r in csv.DictReader(fh):
            if r["kind"] == "illustration":
                box = tuple(int(r[k]) for k in ("x0", "y0", "x1", "y1"))
                boxes.setdefault(Path(r["file"]).name, []).append(box)  # type: ignore[arg-type]
    return boxes


def real_crop(shared: Path, page: str, widest: bool = False, long_side: int = LONG_SIDE):
    """The page's tallest (or widest) annotated woodcut, scaled to ``long_side``."""
    from PIL import Image

    boxes = moreno_regions(shared)[page]
    box = max(boxes, key=lambda b: (b[2] - b[0]) / (b[3] - b[1]) * (1 if widest else -1))
    with Image.open(shared / "figures" / "moreno" / "images" / page) as im:
        crop = im.convert("RGB").crop(box)
    scale = long_side / max(crop.size)
    return crop.resize((round(crop.width * scale), round(crop.height * scale)), Image.LANCZOS)


def jpeg(im) -> bytes:
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=90)
    return buf.getvalue()


def crops_zip(path: Path, images: dict[str, object], caption: str = "a woodcut, {name}",
              candidates: int = 1) -> Path:
    """A figure-crop archive zip: only what metadata.jsonl lists is a dataset item."""
    rows, regions = [], ["file_name,source,page,x0,y0,x1,y1,kind,score,kept"]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for page, (name, im) in enumerate(images.items(), start=3):
            file_name = f"images/moreno_p{page:05d}_f1.jpg"
            zf.writestr(file_name, jpeg(im))
            bbox = [10, 20, 10 + im.width, 20 + im.height]
            rows.append({"file_name": file_name, "text": caption.format(name=name),
                         "source": "moreno", "page": page, "bbox": bbox, "score": 0.93,
                         "kind": "illustration"})  # fmt: skip
            regions.append(f"{file_name},moreno,{page},{','.join(map(str, bbox))},figure,0.93,1")
        for i in range(candidates):  # un-kept crops the curator may review: never trained on
            im = next(iter(images.values()))
            zf.writestr(f"candidates/moreno_p{90 + i:05d}_f2.jpg", jpeg(im))
        zf.writestr("metadata.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
        zf.writestr("regions.csv", "\n".join(regions) + "\n")
        zf.writestr("manifest.csv", "source,page,kept\nmoreno,3,1\n")
    return path


@pytest.fixture(scope="module")
def shapes(shared_data) -> dict[str, object]:
    """Real woodcut crops: portrait, tall, square and landscape (no 9:1 strip)."""
    return {k: real_crop(shared_data, CROPS[k], widest=k == "landscape")
            for k in ("portrait", "tall", "square", "landscape")}  # fmt: skip


@pytest.fixture(scope="module")
def shapes_zip(shapes, tmp_path_factory) -> Path:
    return crops_zip(tmp_path_factory.mktemp("crops") / "crops.zip", shapes)


def run(main, base: Path, datasets: list[Path], out: Path, *extra: str) -> int:
    args = [*map(str, datasets), "-o", str(out), "--base", str(base), "--rank", "4",
            "--alpha", "2", "--lr", "5e-2", *extra]  # fmt: skip
    return main(args)


def new_main(argv: list[str]) -> int:
    from lora.train import main

    return main(argv)


# --- --no-buckets is the pre-split trainer, byte for byte -----------------------------------

# tests/lora_train_presplit.py is lora/train.py exactly as it was before the split (commit
# 83abe35), kept verbatim so that this test runs the old code path next to the new one on
# this machine, with this torch (a hash recorded elsewhere could differ by CPU). Its git blob
# id proves it is unedited: `git rev-parse 83abe35:lora/train.py` prints the same id.
PRESPLIT_BLOB = "6415df89f53e75196a98d7b125e203c769a8cb26"


def presplit_trainer():
    path = Path(__file__).with_name("lora_train_presplit.py")
    data = path.read_bytes()
    assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == PRESPLIT_BLOB
    name = "lora._train_presplit"  # inside the lora package: its relative imports resolve
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def lora_contents(path: Path) -> dict[str, object]:
    """Every tensor's dtype, shape and raw bytes, and the metadata, parsed.

    The file's own bytes are not comparable between two runs even of the same code:
    safetensors writes its metadata map in a random order, and PEFT's ``target_modules``
    is a set. So this compares what those bytes hold, exactly.
    """
    import torch
    from safetensors import safe_open

    out: dict[str, object] = {}
    with safe_open(str(path), "pt") as f:
        meta = dict(f.metadata() or {})
        for key in f.keys():  # noqa: SIM118 - safe_open is not a mapping
            t = f.get_tensor(key).contiguous()
            raw = t.view(-1).view(torch.uint8).numpy().tobytes()
            out[key] = (str(t.dtype), tuple(t.shape), raw)
    for key, value in meta.items():
        if value.startswith("{"):
            parsed = json.loads(value)
            meta[key] = {k: sorted(v) if isinstance(v, list) else v for k, v in parsed.items()}
    out["__metadata__"] = meta
    return out


def same_lora(old: dict[str, object], new: dict[str, object]) -> list[str]:
    """What differs; new metadata keys (the bucket list, say) are allowed, changed ones not."""
    meta_old, meta_new = old.pop("__metadata__"), new.pop("__metadata__")
    diff = [k for k in old.keys() | new.keys() if old.get(k) != new.get(k)]
    return diff + [f"metadata {k}" for k in meta_old if meta_old[k] != meta_new.get(k)]


def outputs_of(folder: Path) -> dict[str, object]:
    names = ("pytorch_lora_weights.safetensors", "lora_kohya.safetensors")
    return {name: lora_contents(folder / name) for name in names}


@pytest.mark.parametrize(
    "extra",
    [
        ("--resolution", "64", "--batch-size", "2", "--max-steps", "4", "--trigger", "imperial"),
        ("--resolution", "64", "--train-text-encoder", "--grad-accum", "2", "--snr-gamma", "5",
         "--cache-latents", "--max-steps", "2", "--checkpoint-every", "1"),
    ],
    ids=["batch2-trigger", "text-encoder-accum-snr-cache"],
)
def test_no_buckets_gives_the_presplit_lora_bytes(tiny_sdxl_dir, shapes, tmp_path, extra):
    # Non-square crops, so the center crop and its time ids matter; no candidates/ folder,
    # which the old reader would have trained on.
    zip_path = crops_zip(tmp_path / "crops.zip", shapes, candidates=0)
    old, new = tmp_path / "old", tmp_path / "new"
    assert run(presplit_trainer().main, tiny_sdxl_dir, [zip_path], old, *extra) == 0
    assert run(new_main, tiny_sdxl_dir, [zip_path], new, *extra, "--no-buckets") == 0
    a, b = outputs_of(old), outputs_of(new)
    for name in a:
        assert same_lora(a[name], b[name]) == [], name
    old_ckpt = sorted((old / "checkpoints").iterdir())[-1] / "lora_params.safetensors"
    new_ckpt = new / "checkpoints" / old_ckpt.parent.name / "lora_params.safetensors"
    assert same_lora(lora_contents(old_ckpt), lora_contents(new_ckpt)) == []
