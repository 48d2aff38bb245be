"""Issue #62 item 3: the whole-photo fits of the same weights, per source and class.

    python bench/vet_variants.py [--cache /work/scratch-vet/views] [--before 6e43d17]
        [--sets test measure species_val pages] [--markdown]

One forward pass per photo and fit (``crop``, ``letterbox``), cached as raw model outputs
in ``<cache>/<set>.pt`` (outside the repository), then ``decide`` replayed per variant:

* ``a``: centre crop, the rules of ``vet/pipeline.py`` at ``--before`` (6e43d17's baseline);
* ``b``: centre crop, today's rules;  ``c``: letterbox, today's rules (shipped before);
* ``d``: both views, their outputs averaged (what ``vet.pipeline.per_photo`` does with a
  photo's views: logits, ImageNet logits, open-set scores), today's rules; shipped
  (``config.image_fit`` = ``both``);
* ``e``: both views, the safer of them (``safer``): ``d``'s answer, but a
  photo on which either view alone names FMD (answer or warning) gets the FMD warning,
  and an ``ok`` answer is withheld when either view alone answers lumpy skin ``ok``.

Per source (and class, on the ``use=measure`` rows): answered, right of answered,
confidently wrong (``ok``, another condition), FMD photos right or warned (FMD named,
as the answer or the warning), lumpy-skin photos right (``ok`` lumpy skin). Species
photos: six-species top-1 (6e43d17 read the species from ImageNet alone; today from
``species_evidence``), pig / sheep / goat given a cattle-only condition, birds given FMD.
Pages: ``not_livestock``. No fitting happens here, so there is no leave-one-source-out.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.vet_eval import bench_model, load_all  # noqa: E402
from bench.vet_species_cache import SIX, set_inputs  # noqa: E402
from bench.vet_species_policy import CATTLE_ONLY, rules_at  # noqa: E402
from vet import pipeline  # noqa: E402
from vet.gate import species_scores  # noqa: E402
from vet.imaging import to_tensor, view_counts  # noqa: E402
from vet.species import SPECIES  # noqa: E402

FIELDS = ("logits", "reference_logits", "prototype_similarity", "ood_distance",
          "neighbour_share", "species_probs")
FITS = ("crop", "letterbox")
VARIANTS = ("a", "b", "c", "d", "e")
NAMES = {"a": "crop, 6e43d17 rules", "b": "crop", "c": "letterbox",
         "d": "both, averaged (shipped)", "e": "both, safer"}
SETS = ("test", "measure", "species_val", "pages")


def page_files(data: Path) -> list[Path]:
    return sorted(p for p in (data / "pages").rglob("*")
                  if p.suffix.lower() in (".jpg", ".jpeg", ".png"))


def forward(model, imgs: list, fit: str) -> dict[str, torch.Tensor]:
    """Raw per-photo outputs of one fit (a photo's views averaged, as the product does)."""
    cfg = model.config
    size = int(getattr(cfg, "image_size", 224))
    out: dict[str, list] = {k: [] for k in FIELDS}
    with torch.inference_mode():
        for s in range(0, len(imgs), 32):
            chunk = imgs[s: s + 32]
            o = pipeline.per_photo(model(pixel_values=to_tensor(chunk, size, fit)),
                                   view_counts(chunk, fit))
            for k in FIELDS:
                if getattr(o, k, None) is not None:
                    out[k].append(getattr(o, k).float())
    return {k: torch.cat(v) for k, v in out.items() if v}


def build(cache: Path, names: list[str]) -> None:
    """The forward passes of the sets not cached yet, both fits."""
    todo = [n for n in names if not (cache / f"{n}.pt").is_file()]
    if not todo:
        return
    data, src, model = bench_model(argparse.Namespace(model=None, threads=1))
    answer = set(model.config.answer_labels)
    cache.mkdir(parents=True, exist_ok=True)
    for name in todo:
        if name == "pages":
            paths = page_files(data)
            truths, sources = ["page"] * len(paths), ["pages"] * len(paths)
        else:
            paths, truths, sources = set_inputs(name, Path(src), data, answer)
        imgs, kept = load_all(paths, name)
        res = {fit: forward(model, imgs, fit) for fit in FITS}
        res.update(files=[str(paths[k]) for k in kept], truths=[truths[k] for k in kept],
                   sources=[sources[k] for k in kept])
        torch.save(res, cache / f"{name}.pt")
        print(f"{name}: {len(kept)} photos -> {cache / (name + '.pt')}", file=sys.stderr)


def both(s: dict) -> dict[str, torch.Tensor]:
    """The two views' outputs averaged, field by field (``per_photo`` on fit ``both``)."""
    return {k: (s["crop"][k] + s["letterbox"][k]) / 2 for k in s["crop"]}


def args_of(cfg, fields: dict) -> list:
    return pipeline.decide_args(cfg, SimpleNamespace(**{k: fields.get(k) for k in FIELDS}))


def variants(cfg, s: dict, old) -> tuple[dict[str, list], dict[str, list]]:
    """Per variant, the triages and ``decide``'s arguments of every photo of a set."""
    args = {"crop": args_of(cfg, s["crop"]), "letterbox": args_of(cfg, s["letterbox"]),
            "both": args_of(cfg, both(s))}
    files = s["files"]

    def run(mod, rows, n=None):
        return [mod.decide(f, *(a[:n] if n else a)) for f, a in zip(files, rows, strict=True)]

    ts = {"a": run(old, args["crop"], 11),  # 6e43d17's decide has no species_probs
          "b": run(pipeline, args["crop"]), "c": run(pipeline, args["letterbox"]),
          "d": run(pipeline, args["both"])}
    ts["e"] = [safer(t, [v1, v2])
               for t, v1, v2 in zip(ts["d"], ts["b"], ts["c"], strict=True)]
    rows = {"a": args["crop"], "b": args["crop"], "c": args["letterbox"],
            "d": args["both"], "e": args["both"]}
    return ts, rows


def safer(avg, views: list):
    """Variant ``e``: the averaged answer, but FMD named by either view alone gives the FMD
    warning, and an ``ok`` answer is withheld where either view alone answers lumpy skin."""
    if avg.condition == pipeline.FMD:
        return avg
    if any(v.condition == pipeline.FMD for v in views):
        return replace(avg, status="uncertain", condition=pipeline.FMD,
                       reason_code="fmd_possible")
    if avg.status == "ok" and avg.condition != "lumpy_skin" and any(
            v.status == "ok" and v.condition == "lumpy_skin" for v in views):
        return replace(avg, status="uncertain", reason_code="views_disagree")
    return avg


def cond_figures(ts: list, truths: list[str]) -> Counter:
    c: Counter = Counter()
    for t, y in zip(ts, truths, strict=True):
        c["n"] += 1
        ok = t.status == "ok"
        c["answered"] += ok
        c["right"] += ok and t.condition == y
        c["wrong"] += ok and t.condition != y
        c["fmd_n"] += y == "fmd"
        c["fmd_rw"] += y == "fmd" and t.condition == "fmd"
        c["lumpy_n"] += y == "lumpy_skin"
        c["lumpy_right"] += y == "lumpy_skin" and ok and t.condition == "lumpy_skin"
    return c


def groups_of(sources: list[str], truths: list[str]) -> dict[str, list[int]]:
    """Per source, per source and class (a measure row's own class), and all."""
    g: dict[str, list[int]] = defaultdict(list)
    for k, (src, y) in enumerate(zip(sources, truths, strict=True)):
        repo = src.split(" | ")[0].split("/")[0]
        g[repo].append(k)
        g[f"{repo} · {src.split(' | ')[1] if ' | ' in src else y}"].append(k)
    g["all"] = list(range(len(sources)))
    return dict(sorted(g.items()))


def fmt_cond(c: Counter) -> str:
    a = c["answered"]
    cell = (f"{a / max(c['n'], 1):.3f} / {c['right'] / max(a, 1):.3f} / {c['right']} / "
            f"{c['wrong']}")
    if c["fmd_n"]:
        cell += f" / FMD {c['fmd_rw']}"
    if c["lumpy_n"]:
        cell += f" / LSD {c['lumpy_right']}"
    return cell


def top1(rows: list, truths: list[str], old: bool) -> dict[str, float]:
    """Six-species top-1: ImageNet's species alone (6e43d17) or ``species_evidence``."""
    if old:
        six = species_scores(torch.stack([r.imagenet_probs for r in rows]), SIX)
    else:
        mass = torch.stack([pipeline.species_evidence(r) for r in rows])
        six = mass[:, [SPECIES.index(s) for s in SIX]]
    pred = [SIX[k] for k in six.argmax(-1).tolist()]
    res = {}
    for sp in SIX:
        ks = [k for k, y in enumerate(truths) if y == sp]
        res[sp] = sum(pred[k] == sp for k in ks) / max(len(ks), 1)
    res["mean"] = sum(res[s] for s in SIX) / len(SIX)
    return res


def report(cache: Path, names: list[str], before: str, markdown: bool) -> None:
    from vet.model_io import model_source
    from vet.modeling_efficientnet_lite import EfficientNetLiteConfig

    cfg = EfficientNetLiteConfig.from_pretrained(model_source(None))
    old = rules_at(before)
    head = "| photos (n) | " + " | ".join(f"{v}: {NAMES[v]}" for v in VARIANTS) + " |"
    print("cells: answered / right of answered / right (count) / confidently wrong (count) "
          "[/ FMD photos right or warned] [/ lumpy skin right (LSD)]\n")
    print(head)
    print("|---" * (len(VARIANTS) + 1) + "|")
    for name in names:
        s = torch.load(cache / f"{name}.pt", weights_only=False)
        ts, rows = variants(cfg, s, old)
        y = s["truths"]
        if name in ("test", "measure"):
            for g, ks in groups_of(s["sources"], y).items():
                if not markdown or " · " not in g or "fmd" in g or "lumpy" in g:
                    figs = [fmt_cond(cond_figures([ts[v][k] for k in ks], [y[k] for k in ks]))
                            for v in VARIANTS]
                    print(f"| {name} {g} ({len(ks)}) | " + " | ".join(figs) + " |")
        elif name == "species_val":
            t1 = {v: top1(rows[v], y, v == "a") for v in VARIANTS}
            print(f"| species top-1, six ({len(y)}) | "
                  + " | ".join(f"{t1[v]['mean']:.3f}" for v in VARIANTS) + " |")
            for sp in ("pig", "sheep", "goat"):
                ks = [k for k, x in enumerate(y) if x == sp]
                print(f"| {sp} given a cattle-only condition ({len(ks)}) | " + " | ".join(
                    str(sum(ts[v][k].condition in CATTLE_ONLY for k in ks)) for v in VARIANTS)
                      + " |")
            ks = [k for k, x in enumerate(y) if x in pipeline.BIRDS]
            print(f"| chicken / duck given FMD ({len(ks)}) | " + " | ".join(
                str(sum(ts[v][k].condition == "fmd" for k in ks)) for v in VARIANTS) + " |")
        else:
            print(f"| pages not_livestock ({len(y)}) | " + " | ".join(
                str(sum(t.status == "not_livestock" for t in ts[v])) for v in VARIANTS) + " |")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default="/work/scratch-vet/views")
    ap.add_argument("--before", default="6e43d17")
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--markdown", action="store_true",
                    help="the model card's rows only (per source; per class only FMD, LSD)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cache = Path(args.cache)
    build(cache, args.sets)
    report(cache, args.sets, args.before, args.markdown)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
