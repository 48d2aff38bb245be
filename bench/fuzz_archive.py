"""Fuzz ``python -m archive`` with mutated real PDFs and count how it ends.

Each run must end as a clean success (exit 0) or a clear error (exit 2 with a
one-line reason); a crash (a signal, a traceback, any other exit code) or a hang
(past the timeout) is a bug.

    python bench/fuzz_archive.py [--n 200] [--seed 0] [--timeout 60] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def seeds(shared: Path, work: Path) -> list[Path]:
    """Real PDFs to mutate: shared/data's scans plus PDFs built like the tests build them."""
    from bench.magazine import write_magazine_pdf
    from tests.pdf_factory import labelled_pages, scans_pdf, text_pdf

    found = sorted((shared / "pdfs").glob("*.pdf"))
    pages = [p for p, _ in labelled_pages(shared)]
    found.append(scans_pdf(work / "scans.pdf", pages[:: max(1, len(pages) // 4)][:4]))
    found.append(scans_pdf(work / "scans-jpx.pdf", pages[:: max(1, len(pages) // 2)][:2], jpx=True))
    found.append(text_pdf(work / "text.pdf", pages=2))
    write_magazine_pdf(work / "magazine.pdf", 3)
    found.append(work / "magazine.pdf")
    return found


def _sub(pattern: bytes, repl, data: bytes, rng: random.Random) -> bytes:
    hits = list(re.finditer(pattern, data))
    if not hits:
        return data
    m = rng.choice(hits)
    new = repl(m) if callable(repl) else repl
    return data[: m.start()] + new + data[m.end() :]


def byte_flips(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 40)):
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randint(1, max(1, len(data) - 1))]


def broken_xref(data: bytes, rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        return _sub(rb"startxref\s+\d+", b"startxref\n%d" % rng.randint(0, 10**9), data, rng)
    return re.sub(rb"\d{10} 00000 n", lambda m: b"%010d 00000 n" % rng.randint(0, 10**9), data)


def huge_mediabox(data: bytes, rng: random.Random) -> bytes:
    size = rng.choice([b"1e9", b"99999999", b"-5", b"0", b"14400"])
    box = b"/MediaBox [0 0 " + size + b" " + size + b"]"
    return _sub(rb"/MediaBox\s*\[[^\]]*\]", box, data, rng)


def wrong_length(data: bytes, rng: random.Random) -> bytes:
    return _sub(rb"/Length \d+", b"/Length %d" % rng.choice([0, 1, 7, 10**9]), data, rng)


def recursive_pages(data: bytes, rng: random.Random) -> bytes:
    m = re.search(rb"(\d+) 0 obj\s*<<\s*/Type\s*/Pages", data)
    if not m:
        return data
    me = m.group(1)
    return re.sub(rb"/Kids\s*\[[^\]]*\]", b"/Kids [" + me + b" 0 R " + me + b" 0 R]", data, count=1)


def claims_100k(data: bytes, rng: random.Random) -> bytes:
    data = _sub(rb"/Width \d+", b"/Width 100000", data, rng)
    return _sub(rb"/Height \d+", b"/Height 100000", data, rng)


MUTATIONS = {
    "byte_flips": byte_flips,
    "truncate": truncate,
    "broken_xref": broken_xref,
    "huge_mediabox": huge_mediabox,
    "wrong_length": wrong_length,
    "recursive_pages": recursive_pages,
    "claims_100k": claims_100k,
}


@dataclass
class Outcome:
    kind: str  # success | clear_error | crash | hang
    mutation: str
    seed_pdf: str
    detail: str


def classify(proc: subprocess.CompletedProcess | None) -> tuple[str, str]:
    if proc is None:
        return "hang", "timed out"
    err = proc.stderr.strip()
    if "Traceback" in err:
        return "crash", err.splitlines()[-1][:200]
    if proc.returncode == 0:
        return "success", ""
    last = err.splitlines()[-1] if err else ""
    if proc.returncode == 2 and last.startswith("error: "):
        return "clear_error", last[:200]
    return "crash", f"exit {proc.returncode}: {last[:200]}"


def run_one(pdf: Path, out: Path, timeout: float) -> subprocess.CompletedProcess | None:
    cmd = [sys.executable, "-m", "archive", str(pdf), "-o", str(out), "--size", "64",
           "--overwrite"]
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def fuzz(n: int, seed: int, timeout: float, shared: Path, keep: Path | None = None,
         progress: bool = True) -> list[Outcome]:
    rng = random.Random(seed)
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="fuzz-archive-") as tmp:
        work = Path(tmp)
        sources = [(p, p.read_bytes()) for p in seeds(shared, work)]
        names = sorted(MUTATIONS)
        for i in tqdm(range(n), desc="fuzzing", disable=not progress):
            src, data = rng.choice(sources)
            name = names[i % len(names)]
            mutated = MUTATIONS[name](data, rng)
            pdf = work / f"case{i:04d}_{name}.pdf"
            pdf.write_bytes(mutated)
            kind, detail = classify(run_one(pdf, work / f"case{i:04d}.zip", timeout))
            outcomes.append(Outcome(kind, name, src.name, detail))
            if keep is not None and kind in ("crash", "hang"):
                keep.mkdir(parents=True, exist_ok=True)
                (keep / pdf.name).write_bytes(mutated)
            pdf.unlink()
            for f in work.glob(f"case{i:04d}.zip*"):
                f.unlink()
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--keep", type=Path, default=None, help="save crashing inputs here")
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = parser.parse_args()
    outcomes = fuzz(args.n, args.seed, args.timeout, args.shared, args.keep)
    counts = Counter(o.kind for o in outcomes)
    print(f"\nN={len(outcomes)} seed={args.seed}")
    for kind in ("success", "clear_error", "crash", "hang"):
        print(f"  {kind:<12}{counts.get(kind, 0):>5}")
    by_mutation = Counter((o.mutation, o.kind) for o in outcomes)
    print("\nby mutation (success / clear error / crash / hang):")
    for name in sorted(MUTATIONS):
        row = [by_mutation.get((name, k), 0) for k in ("success", "clear_error", "crash", "hang")]
        print(f"  {name:<16}" + " / ".join(str(v) for v in row))
    errors = Counter(o.detail for o in outcomes if o.kind == "clear_error")
    print("\nmost common clear errors:")
    for detail, c in errors.most_common(6):
        print(f"  {c:>4}  {detail}")
    for o in outcomes:
        if o.kind in ("crash", "hang"):
            print(f"  {o.kind.upper()}: {o.mutation} of {o.seed_pdf}: {o.detail}")


if __name__ == "__main__":
    main()
