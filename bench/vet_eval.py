"""Measure the vet model on real data, per source: conditions, FMD, open set, species, gate.

    python bench/vet_eval.py [--model vet/model] [--json out.json] [--limit N]

* Conditions and FMD on the shipped checkpoint's held-out test groups (licensed
  rows: conditions/ and extra/ ``use=train``), end to end from the image files.
* The ``use=measure`` rows of extra/ (sources without a licence, never trained
  on), de-duplicated against every licensed photo first: per source and class,
  the share answered right (status ok, right condition), confidently wrong
  (status ok, wrong condition), uncertain and not_livestock. A healthy mouth,
  foot or udder is right when answered ``healthy``.
* Open set: AUROC of the Mahalanobis distance (and, for comparison, of the
  maximum softmax probability and the energy score) between the held-out test
  photos and out-of-distribution sets (other species, other body parts,
  scanned pages and chapbooks, synthetic images), and the share of each set
  answered with status ``ok``.
* Species top-1 over six species on the species validation split (no licence:
  measured only), and the gate on scanned pages.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vet.gate import SPECIES_CLASSES  # noqa: E402
from vet.imaging import BadImage, load_image, to_tensor, view_counts  # noqa: E402
from vet.model_io import load_model, model_source  # noqa: E402
from vet.pipeline import decide, decide_args, per_photo, species_evidence  # noqa: E402
from vet.species import SPECIES as SPECIES_ALL  # noqa: E402

SPECIES = ("chicken", "cow", "duck", "goat", "pig", "sheep")
TOP5_FIT = {**{s: set(SPECIES_CLASSES[s]) for s in SPECIES}, "goat": {348, 349, 350}}
HEALTHY_PARTS = {"healthy_mouth", "healthy_foot", "healthy_udder"}


def shared() -> Path:
    return Path(os.environ.get("BORDE_SHARED_DATA") or ROOT.parent / "shared" / "data")


def load_all(paths: list[Path], desc: str) -> tuple[list[Image.Image], list[int]]:
    imgs, kept = [], []
    for i, p in enumerate(tqdm(paths, desc=desc, unit="img", mininterval=5)):
        try:
            imgs.append(load_image(p, draft=448))
            kept.append(i)
        except BadImage as exc:
            print(f"skip {p}: {exc}", file=sys.stderr)
    return imgs, kept


def bench_model(args: argparse.Namespace) -> tuple[Path, str, object]:
    """The shared data folder, the model source and the loaded model of a bench's
    ``--model`` / ``--threads`` arguments; exit 2 with the reason, before loading any
    model, when the data folder is missing."""
    data = shared()
    if not data.is_dir():
        print(f"shared data not found at {data}; set BORDE_SHARED_DATA", file=sys.stderr)
        raise SystemExit(2)
    if getattr(args, "threads", 0):
        torch.set_num_threads(args.threads)
    src = model_source(args.model)
    return data, src, load_model(src)


def species_photos(data: Path, split: str, species: tuple[str, ...] = SPECIES
                   ) -> tuple[list[Path], list[str]]:
    """The livestock/species photos of one split, and each photo's species."""
    paths, names = [], []
    for sp in species:
        p = sorted((data / "livestock/species" / split / sp).glob("*"))
        paths += p
        names += [sp] * len(p)
    return paths, names


def photo_outputs(model, paths: list[Path], desc: str) -> tuple[list, torch.Tensor, list[int]]:
    """``decide``'s arguments and the ImageNet pooled features per readable photo, for
    benches that sweep the rules over one forward pass."""
    imgs, kept = load_all(paths, desc)
    cfg, rows, pooled = model.config, [], []
    fit, size = getattr(cfg, "image_fit", "crop"), int(getattr(cfg, "image_size", 224))
    with torch.inference_mode():
        for s in range(0, len(imgs), 32):
            chunk = imgs[s: s + 32]
            o = per_photo(model(pixel_values=to_tensor(chunk, size, fit)), view_counts(chunk, fit))
            rows += decide_args(cfg, o)
            pooled.append(o.reference_pooled.float())
    return rows, (torch.cat(pooled) if pooled else torch.zeros(0)), kept


def run(model, images: list[Image.Image], names: list[str], bs: int = 32) -> dict:
    """Triage answers plus the raw scores the AUROC needs, for a list of images."""
    cfg = model.config
    size = int(getattr(cfg, "image_size", 224))
    out: dict = defaultdict(list)
    with torch.inference_mode():
        for s in range(0, len(images), bs):
            chunk = images[s: s + bs]
            fit = getattr(cfg, "image_fit", "crop")
            o = per_photo(model(pixel_values=to_tensor(chunk, size, fit)), view_counts(chunk, fit))
            rows = decide_args(cfg, o)
            labels = rows[0].labels
            cond = torch.tensor([r.cond_probs for r in rows])
            ref = torch.stack([r.imagenet_probs for r in rows])
            for j, args in enumerate(rows):
                out["triage"].append(decide(names[s + j], *args))
                best = labels[int(cond[j].argmax())]
                out["knn"].append(args.neighbours[best] if args.neighbours else 0.0)
            out["pred"] += [labels[k] for k in cond.argmax(-1).tolist()]
            out["msp"].append(cond.max(-1).values)
            out["energy"].append(torch.tensor([r.energy for r in rows]))
            out["dist"].append(o.ood_distance if o.ood_distance is not None
                               else torch.zeros(len(cond)))
            out["ref"].append(ref)
            out["species"].append(torch.stack([species_evidence(r) for r in rows]))
    for k in ("msp", "energy", "dist", "ref", "species"):
        out[k] = torch.cat(out[k]) if out[k] else torch.zeros(0)
    out["knn"] = torch.tensor(out["knn"], dtype=torch.float32)
    return out


def auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(an in-distribution photo scores higher than an out-of-distribution one); ties 1/2."""
    pos, neg = np.asarray(pos, float), np.asarray(neg, float)
    if not len(pos) or not len(neg):
        return float("nan")
    allv = np.concatenate([pos, neg])
    order = allv.argsort(kind="mergesort")
    ranks = np.empty(len(allv))
    sv = allv[order]
    i = 0
    while i < len(sv):  # average ranks over ties
        j = i
        while j + 1 < len(sv) and sv[j + 1] == sv[i]:
            j += 1
        ranks[order[i: j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def outcome(t, truth: str) -> str:
    """right / wrong (confidently) / uncertain / not_livestock for a labelled photo."""
    if t.status == "not_livestock":
        return "not_livestock"
    if t.status != "ok":
        return "uncertain"
    want = "healthy" if truth in HEALTHY_PARTS else truth
    return "right" if t.condition == want else "wrong"


def tally(results: list, truths: list[str], weights: list[float] | None = None) -> dict:
    """Shares of each outcome; ``weights`` (one per photo) count some photos less."""
    w = weights or [1.0] * len(results)
    c: Counter = Counter()
    for t, y, wt in zip(results, truths, w, strict=True):
        c[outcome(t, y)] += wt
    n = sum(w) or 1
    answered = c["right"] + c["wrong"]
    return {"n": len(results), **{k: round(c[k] / n, 3) for k in
                                  ("right", "wrong", "uncertain", "not_livestock")},
            "answered": round(answered / n, 3),
            "right_of_answered": round(c["right"] / (answered or 1), 3),
            "answers": dict(Counter(t.condition if t.status == "ok" else t.status
                                    for t in results))}


def group_weights(groups: list[str]) -> list[float]:
    """1 / copies per photo: Roboflow exports hold up to 42 augmented copies of one photo
    (conditions/ group pic5_jpg, all in the test split), which would otherwise count 42 times."""
    copies = Counter(groups)
    return [1.0 / copies[g] for g in groups]


def synthetic_images(n: int = 60, seed: int = 0) -> list[Image.Image]:
    """Non-animal images: noise, flat colours, gradients, shapes, text, stripes."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = i % 6
        if kind == 0:
            out.append(Image.fromarray(rng.integers(0, 256, (256, 256, 3), dtype=np.uint8)))
        elif kind == 1:
            out.append(Image.new("RGB", (300, 200), tuple(int(v) for v in rng.integers(0, 256, 3))))
        elif kind == 2:
            g = np.linspace(0, 255, 256, dtype=np.uint8)
            arr = np.stack([np.tile(g, (256, 1)), np.tile(g[:, None], (1, 256)),
                            np.full((256, 256), int(rng.integers(0, 256)), np.uint8)], -1)
            out.append(Image.fromarray(arr))
        elif kind == 3:
            img = Image.new("RGB", (320, 240), "white")
            d = ImageDraw.Draw(img)
            for _ in range(8):
                x0, y0 = rng.integers(0, 280), rng.integers(0, 200)
                d.rectangle([x0, y0, x0 + rng.integers(10, 80), y0 + rng.integers(10, 80)],
                            fill=tuple(int(v) for v in rng.integers(0, 256, 3)))
            out.append(img)
        elif kind == 4:
            img = Image.new("RGB", (400, 300), "white")
            d = ImageDraw.Draw(img)
            for row in range(14):
                d.text((10, 10 + row * 20), "Invoice 2024 total 1,250.00 EUR paid " * 2,
                       fill="black")
            out.append(img)
        else:
            arr = np.zeros((240, 240, 3), np.uint8)
            arr[:, ::16] = 255
            arr[::24] = (200, 30, 30)
            out.append(Image.fromarray(arr))
    return out


def held_out_items(model_dir: Path, data: Path) -> tuple[list, list]:
    """The shipped checkpoint's held-out test photos (``test_split.csv``) and every
    licensed photo (for de-duplicating the measure rows)."""
    from vet.train import collect
    from vet.train_data import read_split

    test = read_split(model_dir / "test_split.csv", data / "livestock")
    licensed = collect([data / "livestock/conditions/labels.csv",
                        data / "livestock/extra/labels.csv"])
    return licensed, test


def measure_rows(data: Path, licensed: list) -> tuple[list[dict], int]:
    """extra/ rows marked use=measure, minus photos that duplicate a licensed photo."""
    from vet.dedup import near_pairs, phash

    rows = [r for r in csv.DictReader((data / "livestock/extra/labels.csv").open())
            if r["use"] == "measure"]
    hm = [phash(data / r["file"]) for r in tqdm(rows, desc="hashing measure rows", mininterval=5)]
    hl = [phash(it.path) for it in tqdm(licensed, desc="hashing licensed rows", mininterval=5)]
    dup = {i for i, _ in near_pairs(hm, hl)}
    return [r for i, r in enumerate(rows) if i not in dup], len(dup)


def conditions_report(res: dict, test: list, answer: list[str]) -> dict:
    from vet.train import macro_f1, per_class_report

    keep = [k for k, it in enumerate(test) if it.label in answer]
    truths = [test[k].label for k in keep]
    ts = [res["triage"][k] for k in keep]
    # Forced choice among the answer labels (the macro-F1 the issue tracks) ...
    y = np.array([answer.index(v) for v in truths])
    pred = np.array([answer.index(res["pred"][k]) for k in keep])
    core = [c for c in answer if c != "fmd"]
    rep = per_class_report(y, pred, answer)
    by_source: dict = defaultdict(list)
    for k, t in zip(keep, ts, strict=True):
        by_source[test[k].source].append((t, test[k].label))
    src = np.array([test[k].source for k in keep])
    forced_per_source = {}
    for name in sorted(set(src.tolist())):
        m = src == name
        r = per_class_report(y[m], pred[m], answer)
        forced_per_source[name] = {"n": int(m.sum()), "macro_f1_core4": macro_f1(r, core),
                                   "accuracy": float((y[m] == pred[m]).mean())}
    return {
        "n": len(keep), "per_class": rep,
        "macro_f1_core4": macro_f1(rep, core), "macro_f1_with_fmd": macro_f1(rep, answer),
        "forced_per_source": forced_per_source,
        # ... and what the farmer sees, with the open-set and species rules applied.
        "triage": tally(ts, truths),
        "triage_by_group": {**tally(ts, truths, group_weights([test[k].group for k in keep])),
                            "groups": len({test[k].group for k in keep})},
        "triage_per_source": {s: tally([a for a, _ in v], [b for _, b in v])
                              for s, v in sorted(by_source.items())},
        "triage_per_class": {c: tally([t for t, v in zip(ts, truths, strict=True) if v == c],
                                      [c] * truths.count(c)) for c in answer},
    }


def mouth_foot_check(rows: list[dict], results: list) -> dict:
    """Mouth and foot close-ups answered with a confident udder or eye condition.

    Healthy mouths and feet, and FMD photos except those whose source names them
    as teats or udders (FMD vesicles on a teat are an udder photo).
    """
    def teat(r: dict) -> bool:
        return any(w in r["source_group"].lower() for w in ("teat", "udder"))

    picked = [(r, t) for r, t in zip(rows, results, strict=True)
              if r["label"] in ("healthy_mouth", "healthy_foot")
              or (r["label"] == "fmd" and not teat(r))]
    bad = [(r["file"], t.condition) for r, t in picked
           if t.status == "ok" and t.condition in ("mastitis", "pinkeye")]
    teats = [(r, t) for r, t in zip(rows, results, strict=True) if r["label"] == "fmd" and teat(r)]
    return {"n": len(picked), "udder_or_eye_ok": len(bad), "files": bad,
            "fmd_teat_photos": len(teats),
            "fmd_teat_photos_udder_or_eye_ok": sum(t.status == "ok" and t.condition in
                                                   ("mastitis", "pinkeye") for _, t in teats)}


def species_report(model, data: Path, limit: int) -> tuple[dict, dict]:
    top1, top5, answered, runs, cattle_only, bird_fmd = {}, {}, {}, {}, {}, {}
    sure_fmd = {}
    for sp in SPECIES:
        paths = sorted((data / "livestock/species/validation" / sp).glob("*"))
        paths = paths[:limit] if limit else paths
        imgs, _ = load_all(paths, f"species {sp}")
        r = run(model, imgs, [str(p) for p in paths])
        # the evidence decide reads the species from (the head on close-ups, else ImageNet)
        pred = r["species"][:, [SPECIES_ALL.index(s) for s in SPECIES]].argmax(-1)
        top1[sp] = float((pred == SPECIES.index(sp)).float().mean())
        t5 = r["ref"].topk(5, -1).indices
        top5[sp] = float(np.mean([bool(set(x.tolist()) & TOP5_FIT[sp]) for x in t5]))
        answered[sp] = dict(Counter(t.condition if t.status == "ok" else t.status
                                    for t in r["triage"]))
        if sp in ("pig", "sheep", "goat"):  # never a cattle-only condition, sure or not
            cattle_only[sp] = sum(t.condition not in (None, "fmd") for t in r["triage"])
            # healthy animals (Flickr): a sure FMD answer is a confident wrong notifiable one
            sure_fmd[sp] = sum(t.status == "ok" and t.condition == "fmd" for t in r["triage"])
        if sp in ("chicken", "duck"):  # never FMD: neither an answer nor the warning
            bird_fmd[sp] = sum(t.condition == "fmd" for t in r["triage"])
        runs[sp] = r
    rep = {"species_top1": top1, "species_top1_overall": float(np.mean(list(top1.values()))),
           "port_top5_fit": top5, "species_answers": answered,
           "cattle_only_condition_on_pig_sheep_goat": cattle_only,
           "sure_fmd_answer_on_pig_sheep_goat": sure_fmd,
           "fmd_answer_or_warning_on_birds": bird_fmd}
    return rep, runs


def uncertain_reasons(results: list) -> dict[str, float]:
    """Share of the photos per ``reason_code`` of the ``uncertain`` answers."""
    kinds = Counter(t.reason_code for t in results if t.status == "uncertain")
    return {k: round(v / max(len(results), 1), 4) for k, v in kinds.most_common()}


def print_summary(r: dict) -> None:
    """The headline numbers, one line each (the JSON above has the rest)."""
    c = r["conditions"]
    print("\n== summary ==")
    print(f"held-out licensed, forced choice: macro-F1 (4 cattle conditions) "
          f"{c['macro_f1_core4']:.3f}, with FMD {c['macro_f1_with_fmd']:.3f}, n={c['n']}")
    for name, v in c["forced_per_source"].items():
        print(f"  {name}: macro-F1 {v['macro_f1_core4']:.3f}, accuracy {v['accuracy']:.3f}, "
              f"n={v['n']}")
    fmd = c["per_class"].get("fmd")
    if fmd:
        print(f"  fmd: precision {fmd['precision']:.3f}, recall {fmd['recall']:.3f}, "
              f"n={fmd['support']}")
    g = c["triage_by_group"]
    for name, v in [("held-out licensed triage", c["triage"]),
                    (f"  each source group counted once ({g['groups']} groups)", g),
                    *((f"  {k}", v) for k, v in c["triage_per_source"].items()),
                    ("use=measure triage", r["measure_all"]),
                    *((f"  {k}", v) for k, v in r["measure"].items())]:
        print(f"{name}: n={v['n']} answered {v['answered']:.3f} (right {v['right_of_answered']:.3f}"
              f" of them) right {v['right']:.3f} wrong {v['wrong']:.3f} "
              f"uncertain {v['uncertain']:.3f} not_livestock {v['not_livestock']:.3f}")
    print("use=measure uncertain, why: " + "; ".join(
        f"{k} {v:.3f}" for k, v in r["measure_uncertain_reasons"].items()))
    f = r["measure_fmd_flagged"]
    print(f"use=measure FMD photos: {f['answered']} answered FMD, {f['warned']} warned of FMD, "
          f"{f['n'] - f['answered'] - f['warned']} neither, of {f['n']}")
    m = r["mouth_foot_udder_eye"]
    print(f"mouth/foot close-ups with a confident udder or eye answer: {m['udder_or_eye_ok']} "
          f"of {m['n']}; FMD teat photos: {m['fmd_teat_photos_udder_or_eye_ok']} of "
          f"{m['fmd_teat_photos']}")
    for name, v in r["open_set"].items():
        print(f"open set, {name}: n={v['n']} answered ok {v['answered_ok']:.3f}, AUROC "
              f"Mahalanobis {v['auroc_mahalanobis']:.3f} kNN {v['auroc_knn_share']:.3f} "
              f"energy {v['auroc_energy']:.3f}")
    print(f"species top-1 {r['species_top1_overall']:.3f}: "
          + ", ".join(f"{k} {v:.2f}" for k, v in r["species_top1"].items()))
    print("pig/sheep/goat photos given a cattle-only condition: "
          f"{r['cattle_only_condition_on_pig_sheep_goat']}")
    print("pig/sheep/goat photos given a sure FMD answer: "
          f"{r['sure_fmd_answer_on_pig_sheep_goat']}")
    print("chicken/duck photos given FMD (an answer or the warning): "
          f"{r['fmd_answer_or_warning_on_birds']}")
    print(f"scanned pages not_livestock {r['pages_not_livestock']:.3f} (n={r['pages_n']}), "
          f"synthetic {r['synthetic_not_livestock']:.3f}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--json", default=None, help="also write the numbers here")
    ap.add_argument("--limit", type=int, default=0, help="photos per species (0 = all)")
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    data, src, model = bench_model(args)
    answer = list(model.config.answer_labels)
    report: dict = {"model": src}

    items, test = held_out_items(Path(src), data)
    imgs, kept = load_all([it.path for it in test], "held-out test photos")
    test = [test[k] for k in kept]
    id_run = run(model, imgs, [str(it.path) for it in test])
    report["conditions"] = conditions_report(id_run, test, answer)
    id_mask = np.array([it.label in answer for it in test])
    id_dist = -id_run["dist"].numpy()[id_mask]
    id_msp, id_energy = id_run["msp"].numpy()[id_mask], id_run["energy"].numpy()[id_mask]
    id_knn = id_run["knn"].numpy()[id_mask]

    rows, n_dup = measure_rows(data, items)
    report["measure_duplicates_dropped"] = n_dup
    imgs, kept = load_all([data / r["file"] for r in rows], "measure rows")
    rows = [rows[k] for k in kept]
    ms = run(model, imgs, [r["file"] for r in rows])
    groups: dict = defaultdict(list)
    for k, r in enumerate(rows):
        groups[(r["source_repo"], r["label"], r["species"])].append(k)
    report["measure"] = {f"{s} | {lab} | {sp}": tally([ms["triage"][k] for k in ks],
                                                      [lab] * len(ks))
                         for (s, lab, sp), ks in sorted(groups.items())}
    report["measure_all"] = tally(ms["triage"], [r["label"] for r in rows])
    report["mouth_foot_udder_eye"] = mouth_foot_check(rows, ms["triage"])
    report["measure_uncertain_reasons"] = uncertain_reasons(ms["triage"])
    fmd_rows = [t for r, t in zip(rows, ms["triage"], strict=True) if r["label"] == "fmd"]
    report["measure_fmd_flagged"] = {  # FMD named, answered or as the warning
        "n": len(fmd_rows), "answered": sum(t.status == "ok" and t.condition == "fmd"
                                            for t in fmd_rows),
        "warned": sum(t.status == "uncertain" and t.condition == "fmd" for t in fmd_rows)}

    sp_rep, sp_runs = species_report(model, data, args.limit)
    report.update(sp_rep)

    pages = sorted(p for p in (data / "pages").rglob("*") if p.suffix.lower() in
                   (".jpg", ".jpeg", ".png"))
    imgs, kept = load_all(pages, "scanned pages")
    pg = run(model, imgs, [str(pages[k]) for k in kept], bs=16)
    report["pages_n"] = len(kept)
    report["pages_not_livestock"] = float(np.mean([t.status == "not_livestock"
                                                   for t in pg["triage"]]))
    report["pages_passed_files"] = [t.file for t in pg["triage"] if t.status != "not_livestock"]
    chap = sorted((data / "figures/moreno/images").glob("*.jpg"))
    imgs, kept = load_all(chap, "chapbook pages")
    ch = run(model, imgs, [str(chap[k]) for k in kept], bs=16)
    syn = run(model, synthetic_images(), [f"synthetic-{i}" for i in range(60)])
    report["synthetic_not_livestock"] = float(np.mean([t.status == "not_livestock"
                                                       for t in syn["triage"]]))

    # Open set: the held-out test photos of the answer classes against each OOD set.
    def sel(r: dict, mask=None) -> dict:
        mask = np.ones(len(r["triage"]), bool) if mask is None else np.asarray(mask)
        return {"dist": -r["dist"].numpy()[mask], "msp": r["msp"].numpy()[mask],
                "energy": r["energy"].numpy()[mask], "knn": r["knn"].numpy()[mask],
                "triage": [t for t, k in zip(r["triage"], mask, strict=True) if k]}

    def cat(*parts: dict) -> dict:
        return {k: (np.concatenate([p[k] for p in parts]) if k != "triage"
                    else [t for p in parts for t in p[k]]) for k in parts[0]}

    labels_ms = np.array([r["label"] for r in rows])
    ood_sets = {
        "other species (chicken, duck, goat, pig, sheep photos)":
            cat(*(sel(sp_runs[s]) for s in SPECIES if s != "cow")),
        "other body parts (healthy mouths, feet, udders; use=measure)":
            sel(ms, np.isin(labels_ms, list(HEALTHY_PARTS))),
        "non-animals (scanned pages, chapbook pages, synthetic)": cat(sel(pg), sel(ch), sel(syn)),
    }
    report["open_set"] = {}
    for name, o in ood_sets.items():
        report["open_set"][name] = {
            "n": len(o["triage"]),
            "auroc_mahalanobis": auroc(id_dist, o["dist"]),
            "auroc_max_softmax": auroc(id_msp, o["msp"]),
            "auroc_energy": auroc(id_energy, o["energy"]),
            "auroc_knn_share": auroc(id_knn, o["knn"]),
            "answered_ok": float(np.mean([t.status == "ok" for t in o["triage"]])),
            "uncertain_or_not_livestock": float(np.mean([t.status in ("uncertain",
                                                                      "not_livestock")
                                                         for t in o["triage"]])),
        }
    report["open_set_id_answered_ok"] = float(np.mean(
        [t.status == "ok" for t, k in zip(id_run["triage"], id_mask, strict=True) if k]))
    print(json.dumps(report, indent=2, default=float))
    print_summary(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
