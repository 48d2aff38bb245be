"""How far the Vet Scanner's answers hold when the same photo is taken differently: another
phone, light, white balance, compression or orientation.

    python bench/vet_robustness.py [--model vet/model] [--only NAME ...] [--threads N]
                                   [--mirror-check] [--turn-check]

Farmers' photos come from phones and light this project never sees. Every held-out test
photo of the training sources (``test_split.csv``) and every unlicensed field photo
(``use=measure`` rows of extra/, de-duplicated as in ``bench/vet_eval.py``) is changed the
way another phone's photo may differ, then triaged by the shipped model and rules. Per
change: the answered share, the right share of the answers, the confidently wrong share,
and the two numbers that matter most for safety: sure answers that turn into another
sure answer (a flip) and sure foot-and-mouth answers on photos that are not FMD. Nothing
is chosen on it: test use only.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from io import BytesIO
from pathlib import Path

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import image_changes as array_changes  # noqa: E402
from bench.vet_eval import (  # noqa: E402
    bench_model,
    held_out_items,
    load_all,
    measure_rows,
    outcome,
    run,
    tally,
)

Change = Callable[[Image.Image], Image.Image]


def _pixels(change: array_changes.Change) -> Change:
    return lambda im: Image.fromarray(change(np.asarray(im.convert("RGB"))))


def _jpeg(quality: int) -> Change:
    def go(im: Image.Image) -> Image.Image:
        buf = BytesIO()
        im.save(buf, "JPEG", quality=quality)
        return Image.open(BytesIO(buf.getvalue())).convert("RGB")
    return go


def _small(side: int) -> Change:
    def go(im: Image.Image) -> Image.Image:
        f = side / max(im.size)
        return im.resize((max(1, round(im.width * f)), max(1, round(im.height * f))),
                         Image.Resampling.BICUBIC) if f < 1 else im
    return go


def _closer(im: Image.Image) -> Image.Image:
    """The centre 80%: the farmer stands a step closer."""
    w, h = im.size
    return im.crop((round(0.1 * w), round(0.1 * h), round(0.9 * w), round(0.9 * h)))


CHANGES: dict[str, Change | None] = {
    "as taken": None,
    "darker (gamma 1.5)": _pixels(array_changes.gamma(1.5)),
    "lighter (gamma 0.7)": _pixels(array_changes.gamma(0.7)),
    "warm white balance": _pixels(array_changes.tint(1.0, 0.92, 0.78)),
    "cool white balance": _pixels(array_changes.tint(0.85, 0.95, 1.0)),
    "low saturation": lambda im: ImageEnhance.Color(im).enhance(0.5),
    "soft focus": lambda im: im.filter(ImageFilter.GaussianBlur(1.5)),
    "sensor noise": _pixels(array_changes.noise(10)),
    "JPEG quality 30": _jpeg(30),
    "small (320 px)": _small(320),
    "a step closer": _closer,
    "mirrored": lambda im: im.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
    "turned a quarter": lambda im: im.transpose(Image.Transpose.ROTATE_90),
}


def compare(base: list, now: list, truths: list[str]) -> tuple[int, int]:
    """(sure answers that became another sure answer, new sure FMD answers on photos
    that are not FMD)."""
    flips = sum(a.status == "ok" and b.status == "ok" and a.condition != b.condition
                for a, b in zip(base, now, strict=True))
    fmd = sum(b.status == "ok" and b.condition == "fmd" and y != "fmd"
              and not (a.status == "ok" and a.condition == "fmd")
              for a, b, y in zip(base, now, truths, strict=True))
    return flips, fmd


def _sure_fmd(res: list) -> list[int]:
    return [i for i, t in enumerate(res) if t.status == "ok" and t.condition == "fmd"]


def _kept_warned(check: str, idx: list[int], agree: list[bool], truths: list[str]) -> str:
    """The sure FMD answers a check would keep or turn into the FMD warning, right and
    wrong ones (a warning still says call the vet)."""
    n: Counter = Counter()
    for i, ok in zip(idx, agree, strict=True):
        n[("right" if truths[i] == "fmd" else "wrong", "kept" if ok else "warned")] += 1
    return (f"{check}: right FMD kept {n['right', 'kept']} warned {n['right', 'warned']}, "
            f"wrong FMD kept {n['wrong', 'kept']} warned {n['wrong', 'warned']}")


def mirror_check(model, seen: list[Image.Image], res: list, truths: list[str]) -> str:
    """What asking the mirrored photo to agree would do to the sure FMD answers."""
    idx = _sure_fmd(res)
    flip = [seen[i].transpose(Image.Transpose.FLIP_LEFT_RIGHT) for i in idx]
    again = run(model, flip, [str(i) for i in idx])["triage"] if idx else []
    return _kept_warned("mirror must agree", idx,
                        [t.status == "ok" and t.condition == "fmd" for t in again], truths)


def _fmd_seen(t) -> bool:
    """Whether a triage still sees FMD as possible (answered, warned, or P >= FMD_ALERT)."""
    from vet.pipeline import FMD_ALERT
    return (t.condition == "fmd" or t.reason_code in ("fmd_possible", "fmd_species_unlearned")
            or any(x["label"] == "fmd" and x["p"] >= FMD_ALERT for x in t.top))


def turn_check(model, seen: list[Image.Image], res: list, truths: list[str]) -> str:
    """What asking both quarter-turned views to still see FMD as possible would do to the
    sure FMD answers (a close-up has no upright; the model learned upright photos only)."""
    idx = _sure_fmd(res)
    views = [run(model, [seen[i].transpose(turn) for i in idx], [str(i) for i in idx])["triage"]
             if idx else [] for turn in (Image.Transpose.ROTATE_90, Image.Transpose.ROTATE_270)]
    agree = [all(_fmd_seen(v[k]) for v in views) for k in range(len(idx))]
    return _kept_warned("turned views must see FMD", idx, agree, truths)


def report(model, label: str, imgs: list[Image.Image], names: list[str], truths: list[str],
           changes: list[str], mirror: bool = False, turn: bool = False) -> None:
    print(f"{label} ({len(imgs)} photos):")
    print(f"  {'photo':<22} {'answered':>8} {'right of':>8} {'wrong':>6} {'flips':>6} "
          f"{'new sure FMD, not FMD':>22}")
    base: list = []
    rows = []
    for name in changes:
        change = CHANGES[name]
        seen = imgs if change is None else [change(im) for im in imgs]
        res = run(model, seen, names)["triage"]
        base = base or res
        t = tally(res, truths)
        flips, fmd = compare(base, res, truths)
        if change is not None:
            rows.append((t["answered"], t["right_of_answered"], t["wrong"], flips, fmd))
        print(f"  {name:<22} {t['answered']:>8.3f} {t['right_of_answered']:>8.3f} "
              f"{t['wrong']:>6.3f} {flips:>6} {fmd:>22}", flush=True)
        if mirror:
            print(f"    {mirror_check(model, seen, res, truths)}", flush=True)
        if turn:
            print(f"    {turn_check(model, seen, res, truths)}", flush=True)
    if rows:
        mean = np.mean(np.array(rows, dtype=float), axis=0)
        worst = (min(r[0] for r in rows), min(r[1] for r in rows), max(r[2] for r in rows),
                 max(r[3] for r in rows), max(r[4] for r in rows))
        print(f"  {'mean of the changes':<22} {mean[0]:>8.3f} {mean[1]:>8.3f} {mean[2]:>6.3f} "
              f"{mean[3]:>6.1f} {mean[4]:>22.1f}")
        print(f"  {'worst of the changes':<22} {worst[0]:>8.3f} {worst[1]:>8.3f} "
              f"{worst[2]:>6.3f} {worst[3]:>6} {worst[4]:>22}")
    wrong = [outcome(t, y) == "wrong" for t, y in zip(base, truths, strict=True)]
    print(f"  (as taken: {sum(wrong)} confidently wrong)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--only", nargs="*", help="only these changes (names as printed)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--mirror-check", action="store_true",
                    help="also: sure FMD answers if the mirrored photo had to agree")
    ap.add_argument("--turn-check", action="store_true",
                    help="also: sure FMD answers if both quarter-turned views had to see FMD")
    args = ap.parse_args()
    data, src, model = bench_model(args)
    changes = [n for n in CHANGES if not args.only or CHANGES[n] is None
               or any(o in n for o in args.only)]
    licensed, test = held_out_items(Path(src), data)
    answer = set(model.config.answer_labels)  # as bench/vet_eval: the answer classes only
    test = [it for it in test if it.label in answer]
    imgs, kept = load_all([it.path for it in test], "held-out test photos")
    test = [test[k] for k in kept]
    report(model, "Held-out test groups of the training sources", imgs,
           [str(it.path) for it in test], [it.label for it in test], changes, args.mirror_check,
           args.turn_check)
    rows, _dup = measure_rows(data, licensed)
    imgs, kept = load_all([data / r["file"] for r in rows], "field photos")
    rows = [rows[k] for k in kept]
    report(model, "Field photos of three unlicensed sources (use=measure)", imgs,
           [r["file"] for r in rows], [r["label"] for r in rows], changes, args.mirror_check,
           args.turn_check)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
