"""The triage rules on given model outputs: species scope, FMD first, open set, herd order.

No model is loaded: ``decide`` gets probabilities as the model would hand them
over, so each rule is checked on its own and quickly.
"""

from __future__ import annotations

import torch

from vet.pipeline import FMD_ALERT, MIN_CONFIDENCE, Triage, decide, screenable, table
from vet.ui import herd_alert, herd_order, herd_rows, notifiable, why_uncertain

LABELS = ["fmd", "healthy", "lumpy_skin", "mastitis", "pinkeye"]
HOG, OX, HEN, MASK = 341, 345, 8, 643


def imagenet(**mass: float) -> torch.Tensor:
    """ImageNet probabilities with the given mass on named classes, the rest spread out."""
    idx = {"hog": HOG, "ox": OX, "hen": HEN, "mask": MASK, "llama": 355, "ibex": 350,
           "gazelle": 353, "dane": 246}
    p = torch.zeros(1000)
    for k, v in mass.items():
        p[idx[k]] = v
    rest = 1.0 - float(p.sum())
    others = [i for i in range(1000) if p[i] == 0 and i not in range(339, 356)
              and i not in (7, 8, 97, 98, 99, 603, 690)]
    p[others] = rest / len(others)
    return p


def probs(**p: float) -> list[float]:
    left = (1.0 - sum(p.values())) / (len(LABELS) - len(p))
    return [p.get(c, left) for c in LABELS]


def run(cond, ref, sim=0.9, dist=10.0) -> Triage:
    return decide("x.jpg", cond, LABELS, ref, sim, 0.5, dist, 100.0)


def test_every_condition_lists_its_species_and_fmd_covers_four():
    conds = table()["conditions"]
    assert all(c.get("species") for c in conds.values())
    assert set(conds["fmd"]["species"]) == {"cow", "pig", "sheep", "goat"}
    assert conds["fmd"]["urgency"] == "emergency-notifiable" and conds["fmd"]["notifiable"]
    assert conds["mastitis"]["species"] == ["cow"]
    assert screenable("pig", LABELS) == ["fmd"] and screenable("chicken", LABELS) == []


def test_a_pig_never_gets_a_cattle_only_condition_however_sure_the_head_is():
    for ref in (imagenet(hog=0.9), imagenet(hog=0.3, ox=0.1)):
        t = run(probs(mastitis=0.97), ref)
        assert t.condition != "mastitis"
        assert {d["label"] for d in t.top} <= {"fmd"}
        assert t.status == "uncertain"
        if t.species == "pig":
            assert "pigs the scanner can screen" in t.advice["en"]
            assert "fiebre aftosa" in t.advice["es"].lower()


def test_a_species_is_shown_only_when_it_limits_what_may_be_named():
    # A weak pig guess on a photo like the cattle training photos (an udder close-up)
    # keeps the cattle conditions, so the answer does not say "pig" beside them.
    t = run(probs(fmd=0.6, lumpy_skin=0.3), imagenet(hog=0.07))
    assert t.species == "unknown" and "lumpy_skin" in {d["label"] for d in t.top}
    # A fair pig guess limits the answer to what pigs can have, and says "pig".
    t = run(probs(fmd=0.6, lumpy_skin=0.3), imagenet(hog=0.15))
    assert t.species == "pig" and {d["label"] for d in t.top} == {"fmd"}


def test_an_unsure_cattle_answer_is_not_shown_when_the_best_species_guess_is_a_pig():
    # A pig's snout the head half takes for an udder: ImageNet's 7% "hog" is too weak to
    # limit a sure answer, but an unsure "mastitis" with milk advice is not shown.
    t = run(probs(mastitis=0.7, fmd=0.1), imagenet(hog=0.07))
    assert t.status == "uncertain" and t.condition is None and t.top == []
    assert t.reason == "unsure, and it may be a pig"
    assert why_uncertain(t, "en") == "unsure, and it may be a pig: try a clearer photo"
    assert why_uncertain(t, "es").startswith("no está seguro, y puede ser un cerdo")
    assert "milk" not in t.advice["en"].lower() and "leche" not in t.advice["es"].lower()
    # The same unsure answer on a photo ImageNet sees as cattle keeps its hint.
    t = run(probs(mastitis=0.7, fmd=0.1), imagenet(ox=0.3))
    assert (t.status, t.condition) == ("uncertain", "mastitis")


def test_a_cow_that_imagenet_also_takes_for_a_llama_is_told_the_species_is_unclear():
    t = run(probs(mastitis=0.85), imagenet(ox=0.5, llama=0.3))
    assert t.status == "uncertain" and t.condition is None and t.top == []
    assert t.reason.startswith("species unclear (camelid or cow)")
    assert why_uncertain(t, "en") == "species unclear: try another photo of the whole animal"
    assert "especie" in why_uncertain(t, "es")
    # the species field names the species the advice names
    assert t.species == "camelid" and "looks like a camelid" in t.advice["en"]


def test_a_sure_answer_on_a_photo_imagenet_clearly_sees_as_cattle_is_read_as_cattle():
    """One policy for whole animals and close-ups: a photo read as cattle on its own
    evidence is cattle whatever weaker guesses come beside it. A sure answer (WHOLE_SURE) on
    a photo where cattle is the best guess and clearly seen: a 30% llama or horse guess does
    not refuse a whole cow covered in lumpy-skin nodules."""
    from vet.pipeline import WHOLE_SURE

    for cond in ("lumpy_skin", "healthy"):
        t = run(probs(**{cond: WHOLE_SURE + 0.05}), imagenet(ox=0.5, llama=0.3))
        assert (t.status, t.condition, t.species) == ("ok", cond, "cow"), t
        assert "looks like" not in t.advice["en"]
        # unsure, the llama still makes the species unclear
        t = run(probs(**{cond: WHOLE_SURE - 0.1}), imagenet(ox=0.5, llama=0.3))
        assert t.status == "uncertain" and t.condition is None
    # cattle not ImageNet's best guess, or goat-like bovids beside it: no cattle read
    for ref in (imagenet(ox=0.3, llama=0.4), imagenet(ox=0.4, ibex=0.1, hog=0.3)):
        t = run(probs(lumpy_skin=0.97), ref)
        assert t.condition != "lumpy_skin", t


def test_an_unclear_hoofed_species_that_may_have_fmd_still_gets_the_fmd_warning():
    t = run(probs(fmd=0.6, mastitis=0.3), imagenet(ox=0.3, llama=0.4))
    assert (t.status, t.condition) == ("uncertain", "fmd") and notifiable(t)
    assert t.reason.startswith("possible foot-and-mouth disease, species unclear (camelid or cow")
    assert "call the vet" in t.advice["en"] and "fiebre aftosa" in t.advice["es"]
    assert [d["label"] for d in t.top] == ["fmd"]
    assert why_uncertain(t, "en") == "possible foot-and-mouth disease: call the vet"
    # A bird with a real share of the species mass is in view: never warned of FMD.
    t = run(probs(fmd=0.6, mastitis=0.3), imagenet(hen=0.3, ox=0.05))
    assert t.condition is None and "foot-and-mouth" not in t.advice["en"]


def test_sure_fmd_on_cattle_is_answered_with_the_official_vet_advice_in_both_languages():
    t = run(probs(fmd=0.9), imagenet(ox=0.8))
    assert (t.status, t.condition, t.urgency) == ("ok", "fmd", "emergency-notifiable")
    en, es = t.advice["en"].lower(), t.advice["es"].lower()
    for word in ("isolate", "stop all animal movement", "do not visit other farms",
                 "official veterinarian"):
        assert word in en
    for word in ("aísle", "movimiento", "no visite otras granjas", "veterinario oficial"):
        assert word in es


def test_sure_fmd_on_a_species_never_learned_healthy_is_the_fmd_warning_not_an_answer():
    # The model learned pig FMD and no healthy pig, so a pig's FMD score is no proof; a
    # photo that may be a pig or a cow is held back the same way.
    for ref in (imagenet(hog=0.8), imagenet(hog=0.3, ox=0.4)):
        t = run(probs(fmd=0.97), ref)
        assert (t.status, t.reason_code, t.reason_about, t.condition) == (
            "uncertain", "fmd_species_unlearned", "pig", "fmd")
        assert notifiable(t) and t.urgency == "emergency-notifiable"
        assert t.reason.endswith("no healthy pig learned to tell it from"), t.reason
        assert "call the vet" in t.advice["en"] and "llame al veterinario" in t.advice["es"]
        assert "cannot rule it out" in why_uncertain(t, "en")
        assert "no puede descartarla" in why_uncertain(t, "es")
    # Unsure, it is the plain FMD warning, as on cattle.
    t = run(probs(fmd=0.6), imagenet(hog=0.8))
    assert (t.status, t.reason_code, t.condition) == ("uncertain", "fmd_possible", "fmd")


def test_a_real_chance_of_fmd_withholds_a_confident_non_notifiable_answer():
    t = run(probs(mastitis=0.7, fmd=FMD_ALERT + 0.02), imagenet(mask=0.5))
    assert t.status == "uncertain" and t.condition == "fmd"
    assert t.urgency == "emergency-notifiable"
    assert "foot-and-mouth" in t.advice["en"] and "call the vet" in t.advice["en"]
    assert "fiebre aftosa" in t.advice["es"]
    assert why_uncertain(t, "en").startswith("possible foot-and-mouth")
    # Below the alert level the cattle answer stands.
    t = run(probs(mastitis=0.85, fmd=FMD_ALERT / 2), imagenet(mask=0.5))
    assert (t.status, t.condition) == ("ok", "mastitis")


def test_a_photo_unlike_the_training_photos_is_uncertain_with_a_plain_reason():
    t = run(probs(pinkeye=0.95), imagenet(ox=0.6), dist=500.0)
    assert t.status == "uncertain" and t.condition is None and not t.top
    assert "unlike the photos the model learned from" in t.advice["en"]
    assert "no se parece" in t.advice["es"]
    assert "Take another photo" in t.advice["en"]
    assert why_uncertain(t, "en") == "photo unlike the photos the model learned from"


def test_low_confidence_is_uncertain_and_a_chicken_gets_the_species_scope():
    t = run(probs(pinkeye=MIN_CONFIDENCE - 0.1, healthy=0.3), imagenet(ox=0.6))
    assert t.status == "uncertain" and t.reason.startswith("low confidence")
    t = run(probs(healthy=0.9), imagenet(hen=0.9))
    assert t.status == "uncertain" and t.species == "chicken" and t.condition is None
    assert "cannot screen chickens" in t.advice["en"]


def test_herd_puts_notifiable_suspicions_first_in_red_in_both_languages():
    ok_healthy = run(probs(healthy=0.9), imagenet(ox=0.7))
    fmd_maybe = run(probs(mastitis=0.6, fmd=0.3), imagenet(mask=0.4))
    pinkeye = run(probs(pinkeye=0.9), imagenet(ox=0.4))
    lumpy = run(probs(lumpy_skin=0.9), imagenet(ox=0.7))
    for t, name in zip((ok_healthy, fmd_maybe, pinkeye, lumpy), "abcd", strict=True):
        t.file = f"{name}.jpg"
    herd = [ok_healthy, fmd_maybe, pinkeye, lumpy]
    assert [notifiable(t) for t in herd] == [False, True, False, True]
    assert [t.file for t in herd_order(herd)] == ["d.jpg", "b.jpg", "c.jpg", "a.jpg"]
    rows = herd_rows(herd, "es")
    assert rows[0][0] == "d.jpg" and rows[1][6].startswith("posible fiebre aftosa")
    banner = herd_alert(herd)
    assert "#c62828" in banner and "b.jpg" in banner and "d.jpg" in banner
    assert "official veterinarian" in banner and "veterinario" not in banner
    banner_es = herd_alert(herd, "es")
    assert "veterinario oficial" in banner_es and "official" not in banner_es
    assert "b.jpg" in banner_es and "2 foto(s)" in banner_es
    assert herd_alert([ok_healthy, pinkeye]) == ""


def test_an_answer_whose_nearest_training_photos_are_of_another_condition_is_withheld():
    ref = imagenet(ox=0.3)
    like_feet = {"fmd": 0.6, "healthy": 0.1, "lumpy_skin": 0.0, "mastitis": 0.3, "pinkeye": 0.0}
    t = decide("hoof.jpg", probs(mastitis=0.95), LABELS, ref, 0.9, 0.5, 10.0, 100.0,
               like_feet, 0.4)
    assert t.status == "uncertain" and t.condition is None
    assert "unlike the training photos of mastitis" in t.reason
    assert "foot-and-mouth" in t.advice["en"] and "aftosa" in t.advice["es"]
    assert why_uncertain(t, "en") == "photo unlike the mastitis photos the model learned from"
    assert "mastitis con que aprendió" in why_uncertain(t, "es")
    like_udders = {**like_feet, "fmd": 0.0, "mastitis": 0.9}
    t = decide("udder.jpg", probs(mastitis=0.95), LABELS, ref, 0.9, 0.5, 10.0, 100.0,
               like_udders, 0.4)
    assert t.status == "ok" and t.condition == "mastitis"


def test_sub_classes_add_up_to_their_condition_and_unanswered_classes_drop_out():
    from vet.labels import answer_logits

    trained = ["fmd", "healthy", "healthy~c1", "ringworm"]
    logits = torch.log(torch.tensor([[0.1, 0.3, 0.4, 0.2]]))
    p = answer_logits(logits, trained, ["fmd", "healthy"]).softmax(-1)[0]
    torch.testing.assert_close(p, torch.tensor([0.125, 0.875]))


def test_logits_with_little_evidence_for_any_class_are_unlike_the_training_photos():
    ref = imagenet(ox=0.3)
    sure = probs(lumpy_skin=0.95)

    def at(energy: float, cond=sure) -> Triage:
        return decide("x.jpg", cond, LABELS, ref, 0.9, 0.5, 10.0, 100.0, None, None,
                      energy, 2.0)

    assert at(2.5).status == "ok" and at(2.5).condition == "lumpy_skin"
    t = at(1.5)
    assert t.status == "uncertain" and t.condition is None and t.top == []
    assert t.reason.startswith("unlike the training photos (energy 1.50 < 2.00")
    assert why_uncertain(t, "en") == "photo unlike the photos the model learned from"
    t = at(1.5, probs(fmd=0.95))  # FMD is still the warning, never a silent withhold
    assert t.status == "uncertain" and t.condition == "fmd"
    assert "foot-and-mouth" in t.reason and "unlike the training photos" in t.reason


def _sweep() -> list[Triage]:
    """decide over a grid of species evidence, condition beliefs and open-set scores."""
    import itertools

    refs = [imagenet(**m) for m in ({"ox": 0.7}, {"ox": 0.05}, {"mask": 0.6}, {"hog": 0.9},
                                    {"hog": 0.07}, {"hog": 0.15}, {"hen": 0.9},
                                    {"hen": 0.3, "ox": 0.05}, {"ox": 0.5, "llama": 0.3},
                                    {"ox": 0.3, "llama": 0.4}, {"llama": 0.8},
                                    {"ox": 0.3, "ibex": 0.1})]
    beliefs = [probs(**{c: p}) for c in LABELS for p in (0.4, 0.7, 0.95)]
    beliefs += [probs(mastitis=0.7, fmd=FMD_ALERT + 0.02), probs(fmd=0.1, healthy=0.85)]
    shares = [None, {"fmd": 0.1, "healthy": 0.1, "lumpy_skin": 0.1, "mastitis": 0.6,
                     "pinkeye": 0.1}]
    out = []
    for ref, cond, (sim, dist, energy), share in itertools.product(
            refs, beliefs, [(0.9, 10.0, 3.0), (0.1, 10.0, 3.0), (0.9, 500.0, 3.0),
                            (0.9, 10.0, 1.0)], shares):
        out.append(decide("x.jpg", cond, LABELS, ref, sim, 0.5, dist, 100.0, share, 0.4,
                          energy, 2.0))
    return out


def test_every_answer_that_is_not_ok_has_a_documented_code_with_words_in_both_languages():
    from vet.pipeline import REASON_CODES
    from vet.ui import reason_text

    seen = set()
    for t in _sweep():
        if t.status == "ok":
            assert t.reason_code is None
            continue
        assert t.reason_code in REASON_CODES[t.status], (t.status, t.reason_code)
        seen.add(t.reason_code)
        en, es = reason_text(t, "en"), reason_text(t, "es")
        assert en and es and en != es and "{" not in en + es, (t.reason_code, en, es)
        assert t.to_json()["reason_code"] == t.reason_code
        if t.status == "uncertain":
            assert why_uncertain(t, "es") == es
    # the sweep reaches every documented uncertain code, so none is left without words
    assert seen >= set(REASON_CODES["uncertain"]) | {"not_livestock"}, \
        set(REASON_CODES["uncertain"]) - seen
    from ui_text import strings

    for codes in REASON_CODES.values():
        for code in codes:
            assert strings()["en"][f"vet_reason_{code}"] and strings()["es"][f"vet_reason_{code}"]


def test_pigs_sheep_and_goats_never_get_a_cattle_only_condition():
    cattle_only = {c for c in LABELS if table()["conditions"][c]["species"] == ["cow"]}
    for cls in (HOG, 342, 348, 349, 350):  # hog, boar, ram, bighorn, ibex
        for mass in (0.1, 0.2, 0.5, 0.95):
            ref = torch.full((1000,), (1 - mass) / 999)
            ref[cls] = mass
            for c in cattle_only:
                for sim in (0.9, 0.1):
                    t = decide("x.jpg", probs(**{c: 0.97}), LABELS, ref, sim, 0.5, 10.0, 100.0)
                    assert t.condition not in cattle_only, (cls, mass, c, t)
                    assert not {d["label"] for d in t.top} & cattle_only


def test_a_bird_in_view_never_gets_the_fmd_warning_and_a_weak_bird_guess_never_silences_it():
    """Only a bird clearly in view silences the FMD warning: ImageNet clearly sees a bird
    (BIRD_SEEN), or a farm bird holds a real share of the species mass. A weaker farm-bird
    best guess is a bird only where FMD is not possible (P(FMD) under FMD_ALERT), like the
    FMD photos or not: there it keeps cattle conditions off the bird."""
    from vet.pipeline import BIRD_SEEN

    like_fmd = {"fmd": 1.0, "healthy": 0.0, "lumpy_skin": 0.0, "mastitis": 0.0, "pinkeye": 0.0}
    unlike_fmd = {"fmd": 0.2, "healthy": 0.5, "lumpy_skin": 0.1, "mastitis": 0.1, "pinkeye": 0.1}

    def go(ref, p, share):
        return decide("x.jpg", probs(fmd=p), LABELS, ref, 0.9, 0.5, 10.0, 100.0, share, 0.2)

    for cls in (7, 8, 97, 98, 99):  # cock, hen, drake, merganser, goose
        for p in (FMD_ALERT + 0.01, 0.6, 0.99):
            for share in (like_fmd, unlike_fmd, None):
                # clearly seen (bird mass) or a real share of the species mass: a bird
                for mass in (0.3, BIRD_SEEN + 0.05, 0.95):
                    ref = imagenet(ox=0.05)
                    ref[cls] = mass
                    t = go(ref / ref.sum(), p, share)
                    assert t.condition != "fmd", (cls, mass, p, t)
                    assert "foot-and-mouth" not in t.advice["en"]
                    assert "aftosa" not in t.advice["es"]
                    assert t.species in ("chicken", "duck") and t.status != "ok"
                # a weak farm-bird best guess (7%, no cattle in view), FMD possible: said,
                # whatever its neighbours
                ref = imagenet()
                ref[cls] = 0.07
                t = go(ref / ref.sum(), p, share)
                assert t.condition == "fmd" and notifiable(t), (cls, p, share, t)
                assert t.status == "ok" or t.reason_code == "fmd_possible", t
                assert "vet" in t.advice["en"] and "aftosa" in t.advice["es"]
                assert t.species == "unknown" and "chicken" not in t.advice["en"]
            # FMD not possible: the weak guess is a bird, and no cattle condition is named
            ref = imagenet()
            ref[cls] = 0.07
            t = decide("x.jpg", probs(fmd=FMD_ALERT - 0.05, lumpy_skin=0.9), LABELS,
                       ref / ref.sum(), 0.9, 0.5, 10.0, 100.0, unlike_fmd, 0.2)
            assert t.condition is None and t.species in ("chicken", "duck"), (cls, t)


def test_the_species_field_and_the_advice_never_name_different_species():
    """Over the grid of species evidence, beliefs and open-set scores: an answer whose
    advice says "This looks like a pig" has species "pig", in both languages."""
    names = table()["species_names"]
    for t in _sweep():
        for code, n in names.items():
            en = f"This looks like a {n['en']}."
            es = f"Parece {n['es']}."
            if en in t.advice.get("en", "") or es in t.advice.get("es", ""):
                assert t.species == code, (t.species, t.advice["en"])
        if t.status == "ok" and t.condition not in (None, "fmd"):
            assert t.species in ("cow", "unknown"), t


def head(**p: float) -> torch.Tensor:
    """Species-head probabilities (vet.species.SPECIES order), the rest spread evenly."""
    from vet.species import SPECIES

    left = (1.0 - sum(p.values())) / (len(SPECIES) - len(p))
    return torch.tensor([p.get(s, left) for s in SPECIES])


def test_a_confident_close_up_is_cattle_unless_the_species_head_clearly_sees_another():
    # An udder ImageNet half takes for a hog: the species head (trained on such close-ups)
    # says cow, so the mastitis answer stands and the species shown is cattle.
    args = ("udder.jpg", probs(mastitis=0.95), LABELS, imagenet(hog=0.3), 0.9, 0.5, 10.0, 100.0)
    t = decide(*args, species_probs=head(cow=0.8))
    assert (t.status, t.condition, t.species) == ("ok", "mastitis", "cow")
    # A weak pig guess of the head does not overrule a confident close-up either ...
    t = decide(*args, species_probs=head(cow=0.3, pig=0.4))
    assert t.condition == "mastitis"
    # ... but a clear one does, and without a head ImageNet's 30% hog limits the answer.
    for sp in ({"species_probs": head(pig=0.7)}, {}):
        t = decide(*args, **sp)
        assert t.condition != "mastitis" and t.status == "uncertain", sp
    # Unsure, or unlike the training photos: the head does not decide, ImageNet's guess does.
    t = decide("x.jpg", probs(mastitis=0.6), LABELS, imagenet(hog=0.3), 0.9, 0.5, 10.0, 100.0,
               species_probs=head(cow=0.9))
    assert t.condition != "mastitis"
    t = decide("x.jpg", probs(mastitis=0.95), LABELS, imagenet(hog=0.3), 0.1, 0.5, 10.0, 100.0,
               species_probs=head(cow=0.9))
    assert t.condition != "mastitis"


def test_a_species_head_that_clearly_sees_a_pig_sheep_or_goat_allows_no_cattle_condition():
    cattle_only = {c for c in LABELS if table()["conditions"][c]["species"] == ["cow"]}
    for sp in ("pig", "sheep", "goat"):
        for p in (0.5, 0.7, 0.99):
            for c in cattle_only:
                for ref in (imagenet(ox=0.05), imagenet(mask=0.6), imagenet(ox=0.6)):
                    t = decide("x.jpg", probs(**{c: 0.97}), LABELS, ref, 0.9, 0.5, 10.0, 100.0,
                               species_probs=head(**{sp: p}))
                    if float(ref[OX]) < 0.5:
                        assert t.condition not in cattle_only, (sp, p, c, t)


def test_untrained_species_keep_imagenets_probability_whatever_the_correction():
    """A mouth close-up that the correction pushes away from every trained species (bias
    -bound on them all) does not become the untrained duck's guess: ducks, horses and
    camelids keep ImageNet's own mass, and the trained species share the rest."""
    from vet.gate import species_scores
    from vet.species import SPECIES, species_probs

    ref = torch.stack([imagenet(mask=0.6), imagenet(hog=0.3, llama=0.2)])
    ref[0, 97] = 0.01  # a trace of a drake
    ref = ref / ref.sum(-1, keepdim=True)
    trained = torch.tensor([1.0 if s in ("cow", "sheep", "chicken") else 0.0 for s in SPECIES])
    pooled = torch.randn(2, 16)
    for bias in (-50.0, 0.0, 50.0):
        w, b = torch.zeros(len(SPECIES), 16), torch.full((len(SPECIES),), bias)
        p = species_probs(ref, pooled, w, b, trained, 3.0)
        mass = species_scores(ref, SPECIES)
        assert torch.allclose(p.sum(-1), torch.ones(2), atol=1e-5)
        for k, s in enumerate(SPECIES):
            if not trained[k]:
                assert torch.allclose(p[:, k], mass[:, k], atol=1e-5), (s, bias)
        assert SPECIES[int(p[0].argmax())] != "duck"
    # a correction for cattle moves only the trained share towards cattle
    b = torch.tensor([3.0 if s == "cow" else -3.0 for s in SPECIES])
    p = species_probs(ref, pooled, torch.zeros(len(SPECIES), 16), b, trained, 3.0)
    assert SPECIES[int(p[0].argmax())] == "cow"
    assert abs(float(p[1, SPECIES.index("camelid")]) - float(mass[1, SPECIES.index("camelid")])
               ) < 1e-5


def test_a_species_head_reads_only_sure_udder_and_eye_answers_as_cattle():
    """With a head, a close-up whose neighbours do not all agree is cattle only for a sure
    (HEAD_SURE) mastitis or pinkeye answer; lumpy skin, seen on whole goats and pigs too,
    keeps ImageNet's species guess (HEAD_CLOSE_UP_ONLY)."""
    from vet.pipeline import HEAD_CLOSE_UP_ONLY, HEAD_SURE

    sure = min(0.99, HEAD_SURE + 0.02)

    def go(label, p, share=0.6):
        nb = {c: (share if c == label else (1.0 - share) / 4) for c in LABELS}
        return decide("x.jpg", probs(**{label: p}), LABELS, imagenet(hog=0.3), 0.9, 0.5, 10.0,
                      100.0, nb, 0.2, species_probs=head(cow=0.8))

    for label in ("mastitis", "pinkeye"):
        t = go(label, sure)
        assert (t.status, t.condition, t.species) == ("ok", label, "cow"), t
        assert go(label, HEAD_SURE - 0.1).condition != label  # not sure: ImageNet's hog
    assert HEAD_CLOSE_UP_ONLY
    assert go("lumpy_skin", sure).status != "ok"
    assert go("lumpy_skin", sure, share=1.0).condition == "lumpy_skin"  # the neighbour rule


def test_a_whole_animal_not_clearly_cattle_gets_no_whole_animal_condition_unless_sure():
    """A goat that ImageNet half takes for an ox (and partly for an ibex or a gazelle) is
    not told it is a healthy cow or has lumpy skin; a clear ox, a sure answer, or a close-up
    where ImageNet sees no four-legged animal keep their answer."""
    goat_like = imagenet(ox=0.3, ibex=0.1)
    for cond in ("healthy", "lumpy_skin"):
        t = run(probs(**{cond: 0.85}), goat_like)
        assert t.status == "uncertain" and t.reason_code == "maybe_not_cattle", t
        assert t.condition is None and t.top == [] and t.reason_about == cond
        assert "cattle only" in why_uncertain(t, "en") and "vacas" in why_uncertain(t, "es")
        hint = run(probs(**{cond: 0.6}), goat_like)  # no unsure hint either
        assert hint.condition is None and hint.reason_code == "maybe_not_cattle"
        assert run(probs(**{cond: 0.95}), goat_like).condition == cond  # sure: answered
        assert run(probs(**{cond: 0.85}), imagenet(ox=0.7)).status == "ok"  # a clear ox
        # little cattle mass, a dog breed in its place: whole animal, not clearly cattle
        assert run(probs(**{cond: 0.85}), imagenet(ox=0.05, dane=0.5)).condition is None
    # an udder or eye close-up: ImageNet sees no four-legged animal, the answer stands
    assert run(probs(healthy=0.85), imagenet(mask=0.6)).condition == "healthy"
    # mastitis and pinkeye are seen on close-ups only: the rule leaves them alone
    assert run(probs(pinkeye=0.85), goat_like).condition == "pinkeye"
    # a withheld answer with a real chance of FMD still gets the FMD warning
    t = run(probs(lumpy_skin=0.7, fmd=FMD_ALERT + 0.05), goat_like)
    assert t.reason_code == "fmd_possible" and t.condition == "fmd"
    assert "foot-and-mouth" in t.advice["en"].lower()


def test_without_a_species_head_a_close_up_is_cattle_when_all_its_neighbours_agree():
    """An udder ImageNet half takes for a hog: with no species head, the nearest training
    photos (all cattle) decide. All of them udders with mastitis: answered as cattle; a
    share under CLOSE_UP_NEIGHBOURS, a clear pig, a bird, an unsure or unlike-training
    answer, or a whole-animal condition: ImageNet's guess still limits the answer."""
    from vet.pipeline import CLOSE_UP_NEIGHBOURS

    def go(cond=None, ref=None, sim=0.9, share=1.0, label="mastitis"):
        nb = {c: (share if c == label else (1.0 - share) / 4) for c in LABELS}
        return decide("udder.jpg", cond or probs(**{label: 0.95}), LABELS,
                      imagenet(hog=0.3) if ref is None else ref, sim, 0.5, 10.0, 100.0,
                      nb, 0.2)

    assert CLOSE_UP_NEIGHBOURS > 0.9  # all of the shipped config's 10 neighbours
    for label in ("mastitis", "pinkeye", "lumpy_skin"):
        t = go(label=label)
        assert (t.status, t.condition) == ("ok", label), (label, t)
        assert t.species in ("cow", "unknown")  # never shown as a pig
    for kw in ({"share": 0.8}, {"ref": imagenet(hog=0.6)}, {"ref": imagenet(hen=0.3)},
               {"cond": probs(mastitis=0.7)}, {"sim": 0.1}):
        t = go(**kw)
        assert t.condition != "mastitis" and t.status != "ok", (kw, t)
    # healthy is read off the whole animal: a hog-like photo of it is not a close-up
    t = go(label="healthy")
    assert t.condition != "healthy", t
    # a real chance of FMD still withholds the answer, with the warning
    t = go(cond=probs(mastitis=0.8, fmd=0.17))
    assert (t.status, t.condition, t.reason_code) == ("uncertain", "fmd", "fmd_possible"), t
