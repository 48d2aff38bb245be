"""lora.train on figure crops of every shape: buckets, several zips, captions, the split.

The zips are built like the archive's figure-crop zips (``images/<stem>_p00012_f1.jpg``,
``metadata.jsonl`` with ``source, page, bbox, score, kind``, ``regions.csv`` and a
``candidates/`` folder that must not be trained on), from real woodcut regions of the
Moreno chapbooks in the shared data (``figures/moreno/regions.csv``, CC BY-SA 4.0).
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import sys
import zipfile
from pathlib import Path

import pytest

from tests.pdf_factory import chapbook_boxes
from tests.test_lora import offline_env  # noqa: F401 - the same offline, one-thread setup

# Real woodcut regions: name -> (page image, the box's width / height).
CROPS = {
    "portrait": ("Moreno_125_1.jpg", 0.42),
    "portrait2": ("Moreno_140_1.jpg", 0.44),
    "tall": ("Moreno_133_1.jpg", 0.62),
    "square": ("Moreno_129_1.jpg", 0.98),
    "square2": ("Moreno_106_1.jpg", 0.86),
    "landscape": ("Moreno_121_1.jpg", 1.45),
    "strip": ("Moreno_142_1.jpg", 9.06),  # a printer's rule, 9:1: far beyond 4:1
}
LONG_SIDE = 300  # crops are scaled to this long side: small, still several buckets apart


def real_crop(shared: Path, name: str, long_side: int = LONG_SIDE):
    """The annotated woodcut ``CROPS[name]``, scaled to ``long_side``."""
    from PIL import Image

    page, ratio = CROPS[name]
    boxes = chapbook_boxes(shared)[shared / "figures" / "moreno" / "images" / page]
    box = min(boxes, key=lambda b: abs((b[2] - b[0]) / (b[3] - b[1]) - ratio))
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
    return {k: real_crop(shared_data, k) for k in ("portrait", "tall", "square", "landscape")}


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


# --- buckets ---------------------------------------------------------------------------------


class LossSpy:
    """Wraps the loop's loss: records each step's latent batch shape and time ids."""

    def __init__(self, monkeypatch) -> None:
        import lora.train as lt

        self.calls: list[tuple[tuple[int, ...], list[list[int]]]] = []
        real = lt.diffusion_loss

        def spy(t, dist, emb, pooled, time_ids, snr_gamma):
            self.calls.append((tuple(dist.shape), [list(r) for r in time_ids]))
            return real(t, dist, emb, pooled, time_ids, snr_gamma)

        monkeypatch.setattr(lt, "diffusion_loss", spy)

    def originals(self) -> list[tuple[int, int]]:
        """(w, h) of every image trained on, in order."""
        return [(r[1], r[0]) for _, rows in self.calls for r in rows]


def exact_bucket_copy(im, bucket):
    """What the archive's ``--resize bucket`` writes: cover the bucket, center-crop."""
    from buckets import cover_crop

    (rw, rh), (left, top) = cover_crop(*im.size, bucket)
    return im.resize((rw, rh)).crop((left, top, left + bucket[0], top + bucket[1]))


@pytest.fixture(scope="module")
def mixed(shared_data) -> dict[str, object]:
    """Every shape, two per bucket where possible, a copy at an exact bucket, a 9:1 strip."""
    out = {k: real_crop(shared_data, k) for k in CROPS}
    out["exact"] = exact_bucket_copy(out["landscape"], (320, 192))
    return out


def test_buckets_one_per_batch_and_time_ids_of_the_real_sizes(
    tiny_sdxl_dir, mixed, tmp_path, monkeypatch
):
    from safetensors import safe_open

    from buckets import cover_crop

    zip_path = crops_zip(tmp_path / "crops.zip", mixed, candidates=2)
    spy = LossSpy(monkeypatch)
    out = tmp_path / "lora"
    # 256 px: buckets 192x384 (2 portraits), 192x320, 256x256 (2 squares), 320x192 (2);
    # batch 2: 4 micro-batches, one epoch.
    rc = run(new_main, tiny_sdxl_dir, [zip_path], out, "--resolution", "256",
             "--batch-size", "2", "--max-steps", "4", "--trigger", "imperial")  # fmt: skip
    assert rc == 0
    sizes = {k: im.size for k, im in mixed.items()}
    kept = [sizes[k] for k in sizes if k != "strip"]
    assert sorted(spy.originals()) == sorted(kept)  # each once; no strip, no candidates/
    for shape, rows in spy.calls:
        assert shape[1:2] == (8,)  # mean and log-variance of 4 latent channels
        bucket = (shape[3] * 8, shape[2] * 8)  # (w, h) from the latent batch itself
        assert {(r[5], r[4]) for r in rows} == {bucket}  # one bucket per batch, and its size
        for h, w, top, left, _, _ in rows:
            (rw, rh), crop = cover_crop(w, h, bucket)
            assert (left, top) == crop
            assert bucket[0] * bucket[1] / (rw * rh) > 0.75  # 256 px buckets are coarse
    assert len({(s[2], s[3]) for s, _ in spy.calls}) == 4
    exact = next(r for _, rows in spy.calls for r in rows if (r[1], r[0]) == sizes["exact"])
    assert exact == [192, 320, 0, 0, 192, 320]  # the archive's bucket size: no crop at all

    card = (out / "README.md").read_text()
    for row in ("| 192x384 | 0.50 | 2 | 2 |", "| 256x256 | 1.00 | 2 | 2 |", "| 320x192 |"):
        assert row in card
    assert "Left out (1" in card and "images not in metadata.jsonl" in card
    assert "Caption dropout (`--caption-dropout`" in card and "0 (the default)" in card
    with safe_open(str(out / "lora_kohya.safetensors"), "pt") as f:
        meta = f.metadata()
    assert meta["ss_enable_bucket"] == "True"
    assert len(json.loads(meta["ss_bucket_info"])["buckets"]) == 4


def test_exact_bucket_image_is_used_pixel_for_pixel(mixed):
    import numpy as np
    from PIL import Image

    from lora.dataset_zip import Example
    from lora.train_data import place, prepare_image

    data = jpeg(mixed["exact"])
    sample = place(Example("images/x_p00001_f1.jpg", "", data), 256)
    assert (sample.bucket, sample.resized, sample.crop) == ((320, 192), (320, 192), (0, 0))
    px = prepare_image(sample).permute(1, 2, 0).numpy()
    arr = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.float32)
    assert np.array_equal(px, arr / 127.5 - 1.0)


def test_real_crops_lose_a_few_percent_at_1024_and_a_9_to_1_rule_is_left_out(mixed):
    from lora.dataset_zip import Example
    from lora.train_data import place, too_far

    for name, im in mixed.items():
        sample = place(Example(f"images/{name}.jpg", "", jpeg(im)), 1024)
        if name == "strip":
            assert too_far(sample, 1024) and sample.cut > 0.5
        else:
            assert sample.cut < 0.075 and not too_far(sample, 1024), (name, sample)


@pytest.mark.parametrize("resolution", [256, 1024])
def test_a_tall_1_to_3_plate_keeps_its_head_and_feet(resolution):
    import numpy as np
    from PIL import Image

    from lora.dataset_zip import Example
    from lora.train_data import place, prepare_image

    w, h = 400, 1200  # a 1:3 fashion plate; a red head band and blue feet, 3 % each
    arr = np.full((h, w, 3), 235, np.uint8)
    arr[: h * 3 // 100] = (200, 0, 0)
    arr[-h * 3 // 100 :] = (0, 0, 200)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "PNG")
    example = Example("images/plate_p00001_f1.png", "", buf.getvalue())

    sample = place(example, resolution)
    bw, bh = sample.bucket
    assert bh / sample.resized[1] >= 0.95  # at least 95 % of the height is kept
    px = prepare_image(sample)
    assert px.shape == (3, bh, bw)
    assert px[0, 0].mean() > 0.2 and px[2, 0].mean() < -0.5  # the head is there
    assert px[2, -1].mean() > 0.2 and px[0, -1].mean() < -0.5  # and so are the feet
    square = place(example, resolution, buckets=False)  # the old center crop: a third left
    assert square.bucket[1] / square.resized[1] < 0.34


def test_resume_mid_epoch_with_buckets_is_bit_for_bit(tiny_sdxl_dir, mixed, tmp_path,
                                                       monkeypatch, capsys):  # fmt: skip
    zip_path = crops_zip(tmp_path / "crops.zip", mixed, caption="{name}, woodcut, chapbook")
    opts = ("--resolution", "256", "--batch-size", "2", "--trigger", "imperial",
            "--shuffle-tags", "--caption-dropout", "0.3", "--checkpoint-every", "3")  # fmt: skip
    straight, split = tmp_path / "straight", tmp_path / "split"
    spy = LossSpy(monkeypatch)
    assert run(new_main, tiny_sdxl_dir, [zip_path], straight, *opts, "--max-steps", "6") == 0
    whole = spy.calls[:]
    spy.calls.clear()
    assert run(new_main, tiny_sdxl_dir, [zip_path], split, *opts, "--max-steps", "3") == 0
    capsys.readouterr()
    assert run(new_main, tiny_sdxl_dir, [zip_path], split, *opts, "--max-steps", "6",
               "--resume") == 0  # fmt: skip
    assert "at step 3" in capsys.readouterr().out  # step 3 of an epoch of 4
    assert spy.calls == whole  # the same batches, buckets and time ids, in the same order
    for name in ("pytorch_lora_weights.safetensors", "lora_kohya.safetensors"):
        assert same_lora(lora_contents(straight / name), lora_contents(split / name)) == [], name


def test_two_zips_train_as_one_with_repeats(tiny_sdxl_dir, shapes, tmp_path, monkeypatch,
                                            capsys):  # fmt: skip
    from collections import Counter

    small = crops_zip(tmp_path / "small.zip", {k: shapes[k] for k in ("portrait", "square")})
    large = crops_zip(tmp_path / "large.zip", {k: shapes[k] for k in ("tall", "landscape")})
    spy = LossSpy(monkeypatch)
    out = tmp_path / "lora"
    assert run(new_main, tiny_sdxl_dir, [small, large], out, "--resolution", "64",
               "--epochs", "1", "--repeats", "small.zip=3") == 0  # fmt: skip
    seen = Counter(spy.originals())
    assert len(spy.calls) == 2 * 3 + 2  # one epoch: the small set three times
    assert [seen[shapes[k].size] for k in ("portrait", "square", "tall", "landscape")] == [3, 3,
                                                                                             1, 1]
    card = (out / "README.md").read_text()
    assert "**Steps trained:** 8" in card
    assert "`small.zip`: 2 images, x3 per epoch" in card and "`large.zip`: 2 images, x1" in card

    from lora.train_config import build_parser, config_from_args

    def repeats(*argv):
        return config_from_args(build_parser("").parse_args([*argv, "-o", "x"])).repeats

    assert repeats(str(small), str(large), "--repeats", "3", "1") == [3, 1]
    assert repeats(str(small), str(large), "--repeats", "large=2") == [1, 2]
    capsys.readouterr()
    assert run(new_main, tiny_sdxl_dir, [small, large], tmp_path / "bad", "--repeats", "3") == 2
    assert run(new_main, tiny_sdxl_dir, [small], tmp_path / "bad", "--repeats", "x.zip=2") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "one whole number >= 1 per dataset (2)" in err[0]
    assert "no dataset is called 'x.zip'" in err[1]
    assert not (tmp_path / "bad").exists()


def test_a_presplit_checkpoint_resumes_with_no_buckets(tiny_sdxl_dir, shapes, tmp_path, capsys):
    zip_path = crops_zip(tmp_path / "crops.zip", shapes, candidates=0)
    old_main = presplit_trainer().main
    opts = ("--resolution", "64", "--batch-size", "2")
    straight, split = tmp_path / "straight", tmp_path / "split"
    assert run(old_main, tiny_sdxl_dir, [zip_path], straight, *opts, "--max-steps", "4") == 0
    assert run(old_main, tiny_sdxl_dir, [zip_path], split, *opts, "--max-steps", "2") == 0
    capsys.readouterr()
    assert run(new_main, tiny_sdxl_dir, [zip_path], split, *opts, "--max-steps", "4",
               "--resume") == 2  # fmt: skip
    assert "--resume: buckets differ" in capsys.readouterr().err
    assert run(new_main, tiny_sdxl_dir, [zip_path], split, *opts, "--max-steps", "4",
               "--resume", "--no-buckets") == 0  # fmt: skip
    name = "pytorch_lora_weights.safetensors"
    assert same_lora(lora_contents(straight / name), lora_contents(split / name)) == []


# --- data, captions and order, without a model ----------------------------------------------


def test_figure_crop_zip_reads_only_what_metadata_lists(mixed, tmp_path):
    from lora.dataset_zip import read_dataset_zip

    data = read_dataset_zip(crops_zip(tmp_path / "c.zip", mixed, candidates=3))
    assert len(data.examples) == len(mixed)
    assert all(e.name.startswith("images/moreno_p") and e.name.endswith("_f1.jpg")
               for e in data.examples)  # fmt: skip
    assert all(e.caption.startswith("a woodcut, ") and e.dataset == "c.zip" for e in data.examples)
    assert data.skipped == {"images not in metadata.jsonl": 3, "non-image members": 2}


def test_captions_dropout_shuffle_and_trigger():
    from lora.train_data import Captions

    caps = Captions(["imperial, a lady, a hat, a parasol", "a gentleman, imperial style, a cane"],
                    trigger="imperial", dropout=0.25, shuffle=True, seed=5)  # fmt: skip
    seen = [c for mb in range(400) for c in caps.for_batch([0, 1], mb)]
    dropped = seen.count("")
    assert 0.18 < dropped / len(seen) < 0.32
    kept = [c for c in seen if c]
    assert all(c.startswith("imperial") for c in kept)  # the trigger's tag leads
    assert {frozenset(c.split(", ")) for c in kept} == {
        frozenset({"imperial", "a lady", "a hat", "a parasol"}),
        frozenset({"imperial style", "a gentleman", "a cane"}),
    }
    assert len(set(kept)) > 6  # the other tags are shuffled
    assert caps.for_batch([0, 1], 17) == caps.for_batch([0, 1], 17)  # a function of position
    plain = Captions(["imperial, a lady"], trigger="imperial")
    assert plain.for_batch([0, 0], 3) == ["imperial, a lady"] * 2 and plain.distinct() == [
        "imperial, a lady"]  # fmt: skip


def test_epoch_batches_hold_one_bucket_and_reduce_to_the_plain_shuffle():
    from lora.train_data import batches_per_epoch, epoch_batches, epoch_order, micro_batches

    keys = ["a"] * 5 + ["b"] * 3 + ["c"]
    for epoch in range(3):
        batches = epoch_batches(keys, 2, epoch, seed=7)
        assert all(len({keys[i] for i in b}) == 1 for b in batches)
        assert sorted(i for b in batches for i in b) == list(range(len(keys)))
        assert len(batches) == batches_per_epoch(keys, 2) == 3 + 2 + 1
    assert epoch_batches(keys, 2, 0, 7) != epoch_batches(keys, 2, 1, 7)
    one = [0] * 7  # --no-buckets: one bucket, the pre-split chunking of the shuffle
    order = epoch_order(7, 4, 3)
    assert epoch_batches(one, 3, 4, 3) == [order[0:3], order[3:6], order[6:7]]
    every = list(zip(range(20), micro_batches(keys, 2, 0, 7), strict=False))
    assert [b for _, b in zip(range(5), micro_batches(keys, 2, 15, 7), strict=False)] == [
        b for i, b in every[15:20]]  # fmt: skip


def test_an_archive_figure_zip_lands_in_its_buckets_uncropped(shared_data, tmp_path):
    """The two sides of buckets.py agree: archive crops (--resize bucket) need no cut."""
    import archive
    from lora.dataset_zip import read_dataset_zip
    from lora.train_data import place
    from tests.pdf_factory import chapbook_pages, scans_pdf

    pdf = scans_pdf(tmp_path / "pliego.pdf", chapbook_pages(shared_data)[:3])
    report = archive.build_dataset([pdf], tmp_path / "ds.zip", size=512)
    data = read_dataset_zip(tmp_path / "ds.zip")
    assert len(data.examples) == report.items >= 3
    for example in data.examples:
        sample = place(example, 512)
        assert sample.crop == (0, 0) and sample.resized == sample.bucket, sample
