"""The shipped model on real photos: held-out classes, FMD, pigs, mouths and feet, OOD images.

The thresholds below sit a margin under what ``python bench/vet_eval.py``
measured on the same kinds of photos (see vet/model/README.md), so a model that
got clearly worse fails here.
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("BORDE_SHARED_DATA")
              or Path(__file__).resolve().parents[2] / "shared" / "data")
SHIPPED = Path(__file__).resolve().parents[1] / "vet" / "model"
pytestmark = [
    pytest.mark.skipif(not (SHARED / "livestock").is_dir(),
                       reason=f"shared data not found at {SHARED} (set BORDE_SHARED_DATA)"),
    pytest.mark.skipif(not (SHIPPED / "test_split.csv").is_file(), reason="no shipped model"),
]
ANSWER = ("fmd", "healthy", "lumpy_skin", "mastitis", "pinkeye")
CATTLE_ONLY = {"healthy", "lumpy_skin", "mastitis", "pinkeye"}


@pytest.fixture(scope="module")
def held_out() -> dict[str, list[Path]]:
    """Photos per answer class from the shipped model's held-out test groups."""
    from vet.train_data import read_split

    by: dict[str, list[Path]] = {c: [] for c in ANSWER}
    for it in read_split(SHIPPED / "test_split.csv", SHARED / "livestock"):
        if it.label in by:
            by[it.label].append(it.path)
    return {c: sorted(v)[::5][:6] for c, v in by.items()}


def measure(label: str, species: str | None = None, n: int = 8) -> list[Path]:
    """extra/ photos marked use=measure (never trained on) of one class."""
    with (SHARED / "livestock/extra/labels.csv").open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["use"] == "measure" and r["label"] == label
                and (species is None or r["species"] == species)]
    return [SHARED / r["file"] for r in rows][:: max(1, len(rows) // n)][:n]


@pytest.fixture(scope="module")
def answers(held_out):
    from vet import triage_many

    files = [p for c in ANSWER for p in held_out[c]]
    return dict(zip(files, triage_many(files, policy="keep"), strict=True))


def test_held_out_photos_of_each_class_including_fmd_are_mostly_right(held_out, answers):
    right = Counter(c for c in ANSWER for p in held_out[c] if answers[p].condition == c
                    and answers[p].status in ("ok", "uncertain"))
    assert all(len(held_out[c]) == 6 for c in ANSWER), {c: len(v) for c, v in held_out.items()}
    # Measured on all held-out groups: 60-80% named right per class (mastitis lowest);
    # the whole photo (letterbox) answers 2 points fewer of them right than the centre
    # crop did (0.549 against 0.571, bench/vet_eval.py), so the margin is 18 of 30 now.
    assert sum(right.values()) >= 18, right
    assert all(right[c] >= 2 for c in ANSWER), right
    wrong_ok = [p.name for c in ANSWER for p in held_out[c]
                if answers[p].status == "ok" and answers[p].condition != c]
    assert len(wrong_ok) <= 3, wrong_ok
    for t in answers.values():
        assert t.status in ("ok", "uncertain", "not_livestock")
        if t.status == "ok":
            assert t.top and t.top[0]["label"] == t.condition
            assert t.urgency in ("routine", "soon", "today", "emergency-notifiable")
        assert "not a diagnosis" in t.disclaimer["en"]


def test_fmd_and_lumpy_skin_answers_are_notifiable_with_the_authority_advice(held_out, answers):
    hit = next(answers[p] for p in held_out["lumpy_skin"] if answers[p].condition == "lumpy_skin")
    assert hit.urgency == "emergency-notifiable"
    assert "isolate" in hit.advice["en"].lower() and "aísle" in hit.advice["es"].lower()
    # FMD answered outright or as the warning: notifiable either way, with what to do.
    fmd = [answers[p] for p in held_out["fmd"] if answers[p].condition == "fmd"]
    assert len(fmd) >= 4, [answers[p].reason_code for p in held_out["fmd"]]
    for t in fmd:
        assert t.urgency == "emergency-notifiable"
        if t.status == "ok":
            assert "official veterinarian" in t.advice["en"]
            assert "aísle" in t.advice["es"].lower()
        else:
            assert t.reason_code in ("fmd_possible", "fmd_species_unlearned")
            assert "call the vet" in t.advice["en"] and "keep the animal apart" in t.advice["en"]
            assert "llame al veterinario" in t.advice["es"]


def test_pig_photos_never_get_mastitis_or_any_cattle_only_condition():
    from vet import triage_many

    pigs = sorted((SHARED / "livestock/species/validation/pig").glob("*.jpg"))[::15][:10]
    pigs += measure("fmd", "pig", n=8)
    results = triage_many(pigs, policy="keep")
    assert len(results) >= 16
    for p, t in zip(pigs, results, strict=True):
        assert t.condition not in CATTLE_ONLY, (p.name, t.condition, t.species)
        if t.species == "pig":
            assert not {d["label"] for d in t.top} & CATTLE_ONLY, (p.name, t.top)


def test_mouth_and_foot_closeups_never_get_a_confident_udder_or_eye_condition():
    from vet import triage_many

    photos = measure("healthy_mouth", n=8) + measure("healthy_foot", n=8) + measure("fmd", n=8)
    results = triage_many(photos, policy="keep")
    bad = [(p.name, t.condition) for p, t in zip(photos, results, strict=True)
           if t.status == "ok" and t.condition in ("mastitis", "pinkeye")]
    # Measured on all 535 such measure photos: 1 (a healthy hoof) gets a confident
    # udder or eye answer; the goal of none is not quite met.
    assert len(bad) <= 1, bad
    assert all(t.condition != "pinkeye" or t.status != "ok" for t in results[:8])  # mouths
    # Most FMD photos from the unlicensed sources are flagged (answered or warned).
    flagged = sum(t.condition == "fmd" for t in results[16:])
    assert flagged >= 4, [t.condition for t in results[16:]]


def test_out_of_distribution_images_come_back_uncertain_or_not_livestock():
    from vet import triage_many

    pages = []
    for sub in ("ufal", "dta_text", "ocrd"):
        pages += sorted(p for p in (SHARED / "pages" / sub).rglob("*")
                        if p.suffix.lower() in (".jpg", ".png"))[:3]
    val = SHARED / "livestock/species/validation"
    birds = [p for sp in ("chicken", "duck") for p in sorted((val / sp).glob("*.jpg"))[:6]]
    # the two ducks that ImageNet takes for a partridge or a grouse (no farm species in view),
    # which got FMD (one answered `ok`) before vet.pipeline.BIRD_SEEN
    birds += [val / "duck" / f for f in ("1022350229_2280822f2c_t.jpg",
                                         "24089197850_f4e4a7c161_t.jpg")]
    results = triage_many(pages + birds, policy="keep")
    assert [t.status for t in results[: len(pages)]] == ["not_livestock"] * len(pages)
    assert all(t.condition is None for t in results[: len(pages)])
    # The scanner screens no bird: never an "ok" answer, never a condition, never the FMD
    # warning.
    birds = results[len(pages):]
    assert all(t.status in ("uncertain", "not_livestock") for t in birds)
    assert all(t.condition is None and not t.top for t in birds), [
        (t.file, t.condition, t.reason_code) for t in birds]


def test_other_species_are_rarely_answered_and_never_with_a_cattle_only_condition_in_scope():
    from vet import triage_many

    photos = [p for sp in ("goat", "pig", "sheep")
              for p in sorted((SHARED / "livestock/species/validation" / sp).glob("*.jpg"))[::15]]
    results = triage_many(photos, policy="keep")
    answered = [(p.parent.name, t.condition) for p, t in zip(photos, results, strict=True)
                if t.status == "ok"]
    # Measured on all 450 such photos: 13 (2.9%) get an "ok" answer (27 before
    # never_seen_healthy: whole pigs called FMD; 42 before the cattle_evidence rule: goats taken
    # for cattle); a margin above that here.
    assert len(answered) <= 0.2 * len(photos), answered
    for p, t in zip(photos, results, strict=True):
        if t.species in ("pig", "sheep", "goat"):
            assert t.condition in (None, "fmd"), (p.name, t.species, t.condition)


# Healthy whole pigs of the species validation split that got a sure "foot-and-mouth
# 86-99%" before vet.pipeline.never_seen_healthy (the model learned no healthy pig).
PIGS_CALLED_FMD = ("10068195236_e5e9b90ebd_t.jpg", "13916219107_c3300cbb4c_t.jpg",
                   "14842603384_c6955ccae5_t.jpg", "1503877618_7dfefedcb9_t.jpg",
                   "16904875031_c93e6fcfc2_t.jpg", "19566712_349c55941f_t.jpg",
                   "2204363812_fce7b35cc4_t.jpg", "2479954205_9e6cab6cd0_t.jpg",
                   "2799109840_d6183e207d_t.jpg", "2820315643_35e5eb4c22_t.jpg",
                   "2910244171_ce635213dd_t.jpg", "30313877657_e901445cf8_t.jpg",
                   "31390935021_14d6e0b9a2_t.jpg", "3239963242_2faa332398_t.jpg")


def test_no_healthy_pig_gets_a_sure_fmd_answer_and_pig_fmd_photos_are_still_flagged():
    from vet import triage_many

    pigs = sorted((SHARED / "livestock/species/validation/pig").glob("*.jpg"))
    assert {p.name for p in pigs} >= set(PIGS_CALLED_FMD)
    sure = [p.name for p, t in zip(pigs, triage_many(pigs, policy="keep"), strict=True)
            if t.status == "ok" and t.condition == "fmd"]
    assert sure == [], sure
    with (SHARED / "livestock/extra/labels.csv").open(newline="", encoding="utf-8") as fh:
        sick = [SHARED / r["file"] for r in csv.DictReader(fh)
                if r["label"] == "fmd" and r["species"] == "pig"]
    results = triage_many(sick, policy="keep")
    flagged = [t for t in results if t.condition == "fmd"]
    # Measured: 45 of the 47 FMD pig photos answered or warned, before the rule and after.
    assert len(sick) == 47 and len(flagged) >= 43, len(flagged)
    assert all(t.status == "ok" or t.reason_code in ("fmd_possible", "fmd_species_unlearned")
               for t in flagged)


# Real goat photos of the species validation split that the rules before #21's
# cattle_evidence rule answered "healthy" or "lumpy skin" (a cow's conditions on a goat).
GOATS_TAKEN_FOR_CATTLE = ("13002611643_8deac17cfa_t.jpg", "14000071163_7b24230c9b_t.jpg",
                          "14726344205_8038c8da7a_t.jpg", "15190993101_4cf06ab356_t.jpg",
                          "15739479477_e67cf7a556_t.jpg", "15997805529_cd2eb98429_t.jpg")


def test_goats_sheep_and_pigs_rarely_get_a_cattle_only_condition_and_named_goats_none():
    """ImageNet has no goat, so a whole goat is half an ox to it; the cattle_evidence rule
    withholds a whole-animal condition (healthy, lumpy skin) unless cattle are clearly seen.
    Measured (bench/vet_eval.py) on all 450 pig, sheep and goat validation photos: 20 still
    get a cattle-only condition (52 before the rule); on every third photo here 5 (14
    before), 12 of them held back by the rule."""
    from vet import triage_many
    from vet.ui import why_uncertain

    val = SHARED / "livestock/species/validation"
    named = [val / "goat" / f for f in GOATS_TAKEN_FOR_CATTLE]
    photos = [p for sp in ("goat", "sheep", "pig")
              for p in sorted((val / sp).glob("*.jpg"))[::3]]
    results = triage_many(named + photos, policy="keep")
    for p, t in zip(named, results[:len(named)], strict=True):
        assert t.condition not in CATTLE_ONLY, (p.name, t.condition, t.reason_code)
    rest = results[len(named):]
    cattle = [(p.parent.name, p.name, t.condition) for p, t in zip(photos, rest, strict=True)
              if t.condition in CATTLE_ONLY]
    assert len(cattle) <= 8, cattle
    held = [t for t in rest if t.reason_code == "maybe_not_cattle"]
    assert len(held) >= 6, len(held)
    assert all(t.condition is None and t.top == [] and why_uncertain(t, "es") for t in held)


# Held-out close-ups (test groups of conditions/) that ImageNet takes for a pig, a horse or
# a camelid, refused for the species before vet.pipeline.CLOSE_UP_NEIGHBOURS: a confident
# answer whose 10 nearest training photos all share it is read as cattle. Right, each.
CLOSE_UPS_ALL_NEIGHBOURS_AGREE = (
    "mastitis/b671180fe23f94a4.jpg", "mastitis/c2236a56ce4c1697.jpg",
    "mastitis/211005b4aed22de3.jpg", "mastitis/f3aa398aaf045d11.jpg",
    "mastitis/7da7e6fc95ec1898.jpg", "lumpy_skin/61ad52fed91a1c2e.jpg",
    "lumpy_skin/7f43cc2dbd8b8d3b.jpg", "pinkeye/20cb39e4de8db62d.jpg",
    "pinkeye/c5dc849cacfbb4b5.jpg", "pinkeye/02abea9bc94d2609.jpg")


def test_close_ups_whose_nearest_training_photos_all_agree_are_answered_as_cattle():
    from vet import triage_many

    photos = [SHARED / "livestock/conditions" / f for f in CLOSE_UPS_ALL_NEIGHBOURS_AGREE]
    results = triage_many(photos, policy="keep")
    got = [(p.parent.name, t.status, t.condition, t.reason_code)
           for p, t in zip(photos, results, strict=True)]
    assert all(s == "ok" and c == p for p, s, c, _ in got), got
    assert all(t.species in ("cow", "unknown") for t in results)


SPECIES_CODES = {"species_unclear", "species_not_screened", "species_doubt",
                 "no_sign_for_species"}


def _has_species_head() -> bool:
    import json

    cfg = SHIPPED / "config.json"
    return cfg.is_file() and bool(json.loads(cfg.read_text()).get("species_head"))


# The shipped checkpoint still reads species off ImageNet's classes alone: a retrained
# model with the species head (vet/species.py, `python -m vet.train ... --species ...`)
# answers far more of these close-ups but was worse on the unlicensed field sources and the
# species photos, so it is not shipped (vet/model/README.md). Strict: passing means the
# defect of issue #21 is fixed and this marker must go.
@pytest.mark.xfail(not _has_species_head(), strict=True,
                   reason="shipped model has no species head: close-ups refused for species")
def test_real_udder_eye_and_skin_close_ups_of_cattle_are_answered_as_cattle():
    """The photos the scanner knows best: held-out conditions/ close-ups of udders
    (mastitis), eyes (pinkeye) and skin (lumpy skin), which ImageNet calls pig,
    sheep or camelid. The species head calls them cattle; none is refused for it."""
    from vet import triage_many
    from vet.train_data import read_split

    split = read_split(SHIPPED / "test_split.csv", SHARED / "livestock")
    photos = [it.path for c in ("mastitis", "pinkeye", "lumpy_skin")
              for it in sorted((it for it in split if it.label == c and it.source == "conditions"),
                               key=lambda it: str(it.path))[::7][:8]]
    results = triage_many(photos, policy="keep")
    assert len(results) == 24
    refused = [(p.name, t.reason_code, t.species) for p, t in zip(photos, results, strict=True)
               if t.reason_code in SPECIES_CODES or t.status == "not_livestock"]
    assert not refused, refused
    assert sum(t.species == "cow" for t in results) >= 22, [t.species for t in results]


def decide_inputs(paths: list[Path]) -> list:
    """``decide``'s arguments per photo, from the shipped model as ``triage_many`` runs it."""
    from vet.imaging import IMAGE_SIZE, load_image, to_tensor, view_counts
    from vet.model_io import holder
    from vet.pipeline import decide_args, per_photo

    imgs = [load_image(p, draft=2 * IMAGE_SIZE) for p in paths]

    def run(m):
        size = int(getattr(m.config, "image_size", 224))
        fit = getattr(m.config, "image_fit", "crop")
        out = per_photo(m(pixel_values=to_tensor(imgs, size, fit)), view_counts(imgs, fit))
        return decide_args(m.config, out)

    return holder(None, "keep").run(run)


def species_guess(args) -> dict[str, float]:
    from vet.gate import species_scores
    from vet.species import SPECIES

    return dict(zip(SPECIES, species_scores(args.imagenet_probs, SPECIES).tolist(), strict=True))


# A field photo (D1YaRaJ, never trained on) of a cattle mouth with foot-and-mouth lesions,
# held open by a gloved hand, that ImageNet reads as 5% "duck": before issue #62 the duck
# guess joined the species in view and silenced the warning (``species_unclear``, no FMD).
# The second: a cattle mouth read as 7% "chicken", its best species guess, with only 5 of its
# 10 nearest training photos FMD: a weak bird guess on a photo unlike the FMD photos still
# counted as a bird after items 1-2 and silenced the warning, as on a held-out mouth.
MOUTHS_READ_AS_BIRDS = {"livestock/extra/fmd/a1f4de3e3b9044e5.jpg": "duck",
                        "livestock/extra/fmd/1b2bb0cf8b80ebed.jpg": "chicken"}


@pytest.mark.parametrize("photo_name", sorted(MOUTHS_READ_AS_BIRDS))
def test_a_cattle_mouth_that_imagenet_reads_partly_as_a_bird_still_gets_the_fmd_warning(
        photo_name):
    from vet import triage_many
    from vet.gate import bird_mass
    from vet.pipeline import BIRD_SEEN, FMD_ALERT, SPECIES_PLAUSIBLE, decide

    photo, bird = SHARED / photo_name, MOUTHS_READ_AS_BIRDS[photo_name]
    (args,) = decide_inputs([photo])
    guess = species_guess(args)
    probs = dict(zip(args.labels, args.cond_probs, strict=True))
    assert 0.05 <= guess[bird] < SPECIES_PLAUSIBLE and max(guess, key=guess.get) == bird
    assert float(bird_mass(args.imagenet_probs)) < BIRD_SEEN and probs["fmd"] >= FMD_ALERT
    (t,) = triage_many([photo], policy="keep")
    assert t.condition == "fmd" and t.status in ("ok", "uncertain"), t  # answered or warned
    assert t.urgency == "emergency-notifiable" and t.species in ("unknown", "cow")
    assert "foot-and-mouth" in t.advice["en"].lower() and "aftosa" in t.advice["es"].lower()
    assert "vet" in t.advice["en"] and "veterinario" in t.advice["es"]
    assert bird not in t.advice["en"] and "pato" not in t.advice["es"]
    assert "gallina" not in t.advice["es"] and "pollo" not in t.advice["es"]
    assert decide(t.file, *args).condition == "fmd"


def test_clearly_seen_chickens_never_get_the_fmd_warning():
    """The 50 licensed chicken photos: most have P(FMD) >= FMD_ALERT (a hen's comb and
    wattles look like lesions to the condition head), none gets FMD, answer or warning."""
    from vet.gate import bird_mass
    from vet.pipeline import BIRD_SEEN, FMD_ALERT, decide

    chickens = sorted((SHARED / "livestock/licensed_species/chicken").glob("*.jpg"))
    assert len(chickens) == 50
    rows = decide_inputs(chickens)
    seen = [a for a in rows if float(bird_mass(a.imagenet_probs)) >= BIRD_SEEN
            and dict(zip(a.labels, a.cond_probs, strict=True))["fmd"] >= FMD_ALERT]
    assert len(seen) >= 30, len(seen)  # measured: 35 clearly seen with P(FMD) >= FMD_ALERT
    for p, a in zip(chickens, rows, strict=True):
        t = decide(str(p), *a)
        assert t.condition is None and t.status == "uncertain", (p.name, t)
        assert t.species == "chicken" and "foot-and-mouth" not in t.advice["en"]


# Held-out whole cows with lumpy skin (test groups of conditions/) that ImageNet sees as
# cattle first (cattle mass 0.30-0.66 over the two views, no goat-like bovids) but also as
# a horse or a camelid at 24-32%: refused for the species before issue #62
# (``species_unclear``). Read as cattle now (``seen_as_cattle``: a sure lumpy-skin answer).
LUMPY_COWS_ALSO_HORSE_OR_CAMELID = ("d78388c7b08c84a1.jpg", "eae3b65ca60620c2.jpg",
                                    "c88f09c0f80b9ed7.jpg", "fcdd5dc7a2b02318.jpg")


def test_whole_cows_with_lumpy_skin_are_not_refused_for_a_weaker_horse_or_camelid_guess():
    from vet import triage_many
    from vet.pipeline import SPECIES_PLAUSIBLE

    photos = [SHARED / "livestock/conditions/lumpy_skin" / f
              for f in LUMPY_COWS_ALSO_HORSE_OR_CAMELID]
    for a in decide_inputs(photos):
        guess = species_guess(a)
        assert max(guess, key=guess.get) == "cow"
        assert max(guess["horse"], guess["camelid"]) >= SPECIES_PLAUSIBLE, guess
    for p, t in zip(photos, triage_many(photos, policy="keep"), strict=True):
        assert (t.status, t.condition, t.species) == ("ok", "lumpy_skin", "cow"), (p.name, t)
        assert "isolate" in t.advice["en"].lower() and "looks like" not in t.advice["en"]


def test_the_species_field_and_the_advice_never_name_different_species(held_out, answers):
    """Real photos of every species (a tenth of the species validation split), the held-out
    photos and field photos: when the advice says "This looks like a pig" ("Parece un
    cerdo"), the species field (the herd table's species column) says pig."""
    from vet import triage_many
    from vet.pipeline import table

    val = SHARED / "livestock/species/validation"
    photos = [p for sp in ("chicken", "cow", "duck", "goat", "pig", "sheep")
              for p in sorted((val / sp).glob("*.jpg"))[::10]]
    photos += measure("fmd", n=8) + measure("healthy_mouth", n=8) + measure("healthy", n=8)
    results = triage_many(photos, policy="keep") + list(answers.values())
    names = table()["species_names"]
    named = 0
    for t in results:
        for code, n in names.items():
            if (f"This looks like a {n['en']}." in t.advice.get("en", "")
                    or f"Parece {n['es']}." in t.advice.get("es", "")):
                named += 1
                assert t.species == code, (t.file, t.species, t.advice["en"])
        if t.status == "ok" and t.condition != "fmd":
            assert t.species in ("cow", "unknown"), (t.file, t.species, t.condition)
    assert named >= 30, named  # the rule is exercised: many answers name a species
