"""``--captioner MODEL``: what each kept crop shows, in words, from a vision-language model.

A style LoRA trained on identical captions learns the style and the content together;
a caption that names the content ("a woman holding a parasol") lets the trigger word
take only the style. This runs after the build, on the finished zip: the crops are
read back (nothing is decoded from the PDF again), captioned in batches and the zip
is rewritten through ``archive.apply``'s own writer, so it is byte for byte what a
build with those captions writes. The model (BLIP, Florence-2, any
``AutoModelForImageTextToText``) is loaded for the job through ``ondemand.OnDemand``
and released afterwards: on ZeroGPU each chunk of crops is one ``@spaces.GPU`` call
whose duration is computed from its size, with the CPU as the fallback. If the model
cannot be loaded or fails, the zip is left exactly as the build wrote it, and one
line says why.

    python -m archive.captioner DATASET.zip [--model Salesforce/blip-image-captioning-base]
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from archive.apply import read_dataset, write_replayed
from archive.caption import DEFAULT_CAPTION, make_caption
from archive.errors import ArchiveError
from archive.pipeline import Item
from ondemand import OnDemand, gpu, with_cpu_fallback, zero_gpu_enabled

DEFAULT_MODEL = os.environ.get("BORDE_CAPTIONER", "Salesforce/blip-image-captioning-base")
BATCH = 8
CHUNK = 256  # crops per GPU call: a long job asks for several short slots, not one huge one
MAX_NEW_TOKENS = 30
GPU_LOAD_S, GPU_S_PER_CROP = 30, 0.25  # BLIP-base in fp16, with room to spare
FLORENCE_TASK = "<CAPTION>"
_NOISE = re.compile(r"\b(?:arafed|araffe|arafly|arafe)\b\s*", re.I)  # BLIP's known tics


@dataclass
class CaptionReport:
    model: str
    captioned: int = 0
    seconds: float = 0.0
    device: str = ""
    error: str | None = None

    def summary(self) -> str:
        if self.error:
            return self.error
        if not self.captioned:
            return f"no kept crop for {self.model} to caption"
        return (f"captioned {self.captioned} crop(s) with {self.model} on {self.device} "
                f"in {self.seconds:.1f} s")


class Captioner:
    """A processor and its model: what ``OnDemand`` hands out for one job."""

    def __init__(self, processor, model) -> None:
        self.processor, self.model = processor, model

    def to(self, device: str) -> Captioner:
        self.model.to(device)
        return self

    @property
    def device(self) -> str:
        return str(next(self.model.parameters()).device)

    def __call__(self, images: list) -> list[str]:
        """One caption per PIL image, in one forward pass."""
        florence = getattr(self.model.config, "model_type", "") == "florence2"
        kwargs = {"text": [FLORENCE_TASK] * len(images)} if florence else {}
        inputs = self.processor(images=images, return_tensors="pt", **kwargs)
        dtype = next(self.model.parameters()).dtype
        inputs = {k: (v.to(self.device, dtype) if v.is_floating_point() else v.to(self.device))
                  for k, v in inputs.items()}
        out = self.model.generate(**inputs, max_new_tokens=MAX_NEW_TOKENS, do_sample=False)
        return [clean(t) for t in self.processor.batch_decode(out, skip_special_tokens=True)]


def clean(text: str) -> str:
    """One line, without BLIP's stray tokens or a trailing full stop."""
    text = _NOISE.sub("", " ".join(text.replace("\n", " ").split()))
    return text.strip(" .,;:").strip()


def loader(model_id: str) -> Callable[[str], Captioner]:
    """``load_fn(device)`` for ``OnDemand``: a real ``from_pretrained`` on a Hub id or folder."""

    def load(device: str) -> Captioner:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        dtype = torch.float16 if device.startswith("cuda") else torch.float32
        processor = AutoProcessor.from_pretrained(model_id)
        model = AutoModelForImageTextToText.from_pretrained(model_id, dtype=dtype)
        return Captioner(processor, model.eval())

    return load


def caption_images(model_id: str, jpegs: list[bytes], batch: int = BATCH,
                   device: str | None = None,
                   progress: Callable[[int], None] | None = None) -> tuple[list[str], str]:
    """Captions for JPEG bytes, and the device they ran on; the model is released after."""
    from PIL import Image

    holder = OnDemand(loader(model_id), policy="release", name=f"captioner {model_id}")

    def run(cap: Captioner) -> tuple[list[str], str]:
        out: list[str] = []
        for k in range(0, len(jpegs), batch):
            images = [Image.open(io.BytesIO(b)).convert("RGB") for b in jpegs[k:k + batch]]
            out += cap(images)
            if progress is not None:
                progress(len(images))
        return out, cap.device

    return holder.run(run, device)


def gpu_seconds(model_id: str, jpegs: list[bytes], batch: int = BATCH) -> int:
    """What one ZeroGPU call asks for: the model's load plus its share of crops."""
    return int(GPU_LOAD_S + GPU_S_PER_CROP * len(jpegs))


@gpu(duration=gpu_seconds)
def caption_on_gpu(model_id: str, jpegs: list[bytes], batch: int = BATCH
                   ) -> tuple[list[str], str]:
    """One ``@spaces.GPU`` call (a no-op decorator off ZeroGPU)."""
    return caption_images(model_id, jpegs, batch)


def caption_all(model_id: str, jpegs: list[bytes], batch: int = BATCH,
                progress: Callable[[int], None] | None = None) -> tuple[list[str], str]:
    """Every crop, chunk by chunk; a spent GPU quota or no GPU falls back to the CPU."""
    if not zero_gpu_enabled():  # one process, one load: the bar moves batch by batch
        return caption_images(model_id, jpegs, batch, progress=progress)
    captions: list[str] = []
    device = ""
    for k in range(0, len(jpegs), CHUNK):
        chunk = jpegs[k:k + CHUNK]
        got, device = with_cpu_fallback(
            lambda chunk=chunk: caption_on_gpu(model_id, chunk, batch),
            lambda chunk=chunk: caption_images(model_id, chunk, batch, "cpu"),
            what="the captioner")
        captions += got
        if progress is not None:
            progress(len(chunk))
    return captions, device


def caption_dataset(dataset: str | Path, model_id: str = DEFAULT_MODEL, batch: int = BATCH,
                    progress: Callable[[int], None] | None = None) -> CaptionReport:
    """Write each kept item's model caption into the zip; on any failure leave it as it is."""
    path = Path(dataset)
    report = CaptionReport(model_id)
    t0 = time.perf_counter()
    data = read_dataset(path)
    kept = [r for r in data.regions if r.kept and r.file_name]
    if not kept:
        return report
    try:
        with zipfile.ZipFile(path) as zf:
            jpegs = [zf.read(r.file_name) for r in kept]
        captions, report.device = caption_all(model_id, jpegs, batch, progress)
    except Exception as exc:  # noqa: BLE001 - a model that fails never costs the dataset
        reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
        report.error = (
            f"captioner {model_id} failed ({type(exc).__name__}{': ' + reason if reason else ''}); "
            "the zip keeps its printed and template captions. Point --captioner (or "
            "BORDE_CAPTIONER) at a local model folder if the Hub cannot be reached")
        return report
    info = dict(data.info, captioner=model_id)
    template = info.get("caption") or DEFAULT_CAPTION
    for r, content in zip(kept, captions, strict=True):
        r.model_caption = content
        r.caption = make_caption(template, r.source, r.page, info.get("trigger"),
                                 r.printed_text, content, r.origin)
    rewrite(data, path, info)
    report.captioned, report.seconds = len(kept), time.perf_counter() - t0
    return report


def rewrite(data, path: Path, info: dict) -> None:
    """The zip again with the new captions, under a temporary name, then renamed over it."""
    by_page: dict[tuple[str, int], list] = {}
    for r in data.regions:
        by_page.setdefault((r.source, r.page), []).append(r)
    pages = [(p, [Item(r) for r in by_page.get((p.source, p.page), [])]) for p in data.pages]
    tmp = path.with_name(path.stem + ".captioning.zip")
    tmp.unlink(missing_ok=True)
    tmp.with_name(tmp.name + ".partial").unlink(missing_ok=True)
    write_replayed(data, pages, tmp, info)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m archive.captioner",
        description="Caption the kept crops of a dataset zip with a vision-language model.")
    p.add_argument("datasets", nargs="+", metavar="DATASET.zip")
    p.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"Hub id or local folder (default {DEFAULT_MODEL}; BORDE_CAPTIONER)")
    p.add_argument("--batch", type=int, default=BATCH)
    args = p.parse_args(argv)
    failed = False
    for dataset in args.datasets:
        try:
            report = caption_dataset(dataset, args.model, max(1, args.batch))
        except ArchiveError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"{dataset}: {report.summary()}", file=sys.stderr if report.error else sys.stdout)
        failed |= report.error is not None
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
