"""Read an archive dataset zip safely, straight from memory.

The zip may come from anyone (an upload, a shared link), so it is treated as
hostile: before anything is read, every entry is checked, and the whole zip is
refused (:class:`UnsafeZip`) if one entry

* would land outside a target folder (``../`` zip-slip, or an absolute path),
* is a symbolic link (Unix mode in ``external_attr``),
* is a zip bomb: a compression ratio over 100, or a total uncompressed size
  over the limit (2 GiB by default).

Nothing is extracted: images are decoded from the zip in memory, so nothing
can be written anywhere. When the zip has a ``metadata.jsonl``, the images it
lists are the dataset and every other image is skipped and counted (the
archive's ``candidates/`` folder holds crops the curator did not keep); other
columns of its rows (``source``, ``page``, ``bbox``, ``score``, ``kind``) are
read past. Without one, every image is an item (a kohya-style folder).
Members that are neither images nor captions (``manifest.csv``,
``regions.csv``, a README) are skipped and counted. Captions come from
``metadata.jsonl`` (``file_name``, ``text``), else from the image's ``.txt``
sibling.
"""

from __future__ import annotations

import io
import json
import posixpath
import stat
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

IMAGE_EXTS = {".jpg", ".jpeg", ".png", ".webp"}
MAX_RATIO = 100
MAX_TOTAL_BYTES = 2 * 2**30
MAX_MEMBERS = 100_000
MAX_IMAGE_PIXELS = 64 * 2**20  # 64 MP: a decompression bomb in a single image
RATIO_MIN_BYTES = 64 * 2**10  # tiny text files may compress well without being bombs


class UnsafeZip(ValueError):
    """The zip was refused as a whole; the message names the entry and the reason."""


@dataclass(frozen=True)
class Example:
    name: str  # the member name, e.g. "images/mag_p00003_f1.jpg"
    caption: str
    data: bytes  # the encoded image, decoded on demand
    dataset: str = ""  # the zip it came from, when several are trained together
    # which of the archive's caption sources its row has: "printed text", "model caption"
    kinds: tuple[str, ...] = ()


@dataclass
class ZipDataset:
    examples: list[Example]
    skipped: Counter = field(default_factory=Counter)  # reason -> count
    caption_source: Counter = field(default_factory=Counter)  # metadata.jsonl | txt | none

    def summary(self) -> str:
        skip = ", ".join(f"{n} {why}" for why, n in sorted(self.skipped.items())) or "none"
        src = ", ".join(f"{n} from {s}" for s, n in sorted(self.caption_source.items()))
        return f"{len(self.examples)} images (captions: {src or 'none'}); skipped: {skip}"


def unsafe_reason(info: zipfile.ZipInfo) -> str | None:
    """Why this entry may not be read, or None when it is safe."""
    name = info.filename
    if "\x00" in name:
        return "a NUL byte in its name"
    norm = name.replace("\\", "/")
    if norm.startswith("/") or (len(norm) > 1 and norm[1] == ":"):
        return "an absolute path"
    if ".." in PurePosixPath(norm).parts:
        return "a '..' component (zip-slip)"
    if posixpath.normpath("/" + norm).startswith("/..") or norm.startswith("~"):
        return "a path outside the target"
    mode = info.external_attr >> 16
    if info.create_system == 3 and stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISLNK(mode):  # some tools write Unix modes with another create_system
        return "a symbolic link"
    if info.file_size > RATIO_MIN_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        return f"a compression ratio over {MAX_RATIO} (zip bomb)"
    return None


def check_zip(zf: zipfile.ZipFile, max_total_bytes: int = MAX_TOTAL_BYTES) -> None:
    """Refuse the whole zip before reading a byte of it (raises :class:`UnsafeZip`)."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise UnsafeZip(f"{len(infos)} entries is more than the {MAX_MEMBERS} allowed")
    total = 0
    for info in infos:
        reason = unsafe_reason(info)
        if reason:
            raise UnsafeZip(f"refused zip entry {info.filename!r}: {reason}")
        total += info.file_size
        if total > max_total_bytes:
            raise UnsafeZip(
                f"refused zip: over {max_total_bytes / 2**30:.1f} GiB uncompressed (zip bomb?)"
            )


def _read(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """Read at most the declared size: a lying header cannot inflate past it."""
    with zf.open(info) as fh:
        data = fh.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise UnsafeZip(f"refused zip entry {info.filename!r}: larger than its header says")
    return data


def _valid_image(data: bytes) -> str | None:
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as im:
            if im.width * im.height > MAX_IMAGE_PIXELS:
                return "images over 64 MP"
            im.verify()
    except Exception:  # noqa: BLE001 - any decoder error means "not an image"
        return "unreadable images"
    return None


CAPTION_KINDS = {"printed_text": "printed text", "model_caption": "model caption"}


def _metadata_captions(zf: zipfile.ZipFile, info: zipfile.ZipInfo,
                       kinds: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Image stem -> caption for every row of ``metadata.jsonl``; bad rows are passed over.

    ``kinds`` collects, per stem, which of the archive's caption sources the row has.
    """
    root = posixpath.dirname(info.filename.replace("\\", "/"))
    captions: dict[str, str] = {}
    for line in _read(zf, info).decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            file_name = posixpath.normpath(posixpath.join(root, str(row["file_name"])))
            stem = posixpath.splitext(file_name)[0]
            captions[stem] = str(row.get("text", "")).strip()
            if kinds is not None:
                kinds[stem] = [name for key, name in CAPTION_KINDS.items()
                               if str(row.get(key) or "").strip()]
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return captions


def read_dataset_zip(path: str | Path, max_total_bytes: int = MAX_TOTAL_BYTES) -> ZipDataset:
    """All (image, caption) pairs of a dataset zip, checked and held in memory."""
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise UnsafeZip(f"{path} is not a readable zip file ({exc})") from exc
    with zf:
        check_zip(zf, max_total_bytes)
        infos = {i.filename.replace("\\", "/"): i for i in zf.infolist() if not i.is_dir()}
        txt: dict[str, str] = {}
        for name, info in infos.items():
            if name.lower().endswith(".txt"):
                stem = name[: -len(".txt")]
                txt[stem] = _read(zf, info).decode("utf-8", "replace").strip()
        # The shallowest metadata.jsonl is the dataset's (a copy in a subfolder is not).
        metas = [n for n in infos if PurePosixPath(n).name == "metadata.jsonl"]
        meta = min(metas, key=lambda n: (n.count("/"), n)) if metas else None
        kinds: dict[str, list[str]] = {}
        listed = _metadata_captions(zf, infos[meta], kinds) if meta else None
        out = ZipDataset(examples=[])
        for name in sorted(infos):
            suffix = PurePosixPath(name).suffix.lower()
            if suffix not in IMAGE_EXTS:
                if suffix != ".txt" and name != meta:
                    out.skipped["non-image members"] += 1
                continue
            stem = posixpath.splitext(name)[0]
            if listed is not None and stem not in listed:
                out.skipped["images not in metadata.jsonl"] += 1
                continue
            data = _read(zf, infos[name])
            bad = _valid_image(data)
            if bad:
                out.skipped[bad] += 1
                continue
            if listed is not None:
                caption, source = listed[stem], "metadata.jsonl"
            else:
                caption, source = (txt[stem], "txt") if stem in txt else ("", "none")
            out.caption_source[source] += 1
            out.examples.append(Example(name, caption, data, Path(path).name,
                                        tuple(kinds.get(stem, ()))))
    if not out.examples:
        raise UnsafeZip(f"{path} holds no usable images ({out.summary()})")
    return out
