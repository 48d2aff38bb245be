"""Species guess and the not-livestock gate, both read off the ImageNet head.

The ImageNet head already separates farm animals from everything else; no
shipped weights are trained on the (unlicensed) species photos. The class to
species mapping below is written from the ImageNet class meanings, not fitted.
"""

from __future__ import annotations

import torch

# ImageNet-1k class indices whose meaning fits each species.
SPECIES_CLASSES: dict[str, tuple[int, ...]] = {
    "chicken": (7, 8),  # cock, hen
    "duck": (97, 98, 99),  # drake, red-breasted merganser, goose
    "cow": (345, 346, 347, 690),  # ox, water buffalo, bison, oxcart
    "pig": (341, 342, 343),  # hog, wild boar, warthog
    "sheep": (348, 349),  # ram, bighorn
    "goat": (350,),  # ibex (ImageNet has no domestic goat)
    "horse": (339, 603),  # sorrel, horse cart
    "camelid": (354, 355),  # dromedary, llama
}
# Where ImageNet puts goats (it has no domestic goat) and sheep: ram, bighorn, ibex,
# hartebeest, impala, gazelle (the goat-like bovids).
CAPRINE_CLASSES: tuple[int, ...] = (348, 349, 350, 351, 352, 353)
# Every ImageNet bird (cock and hen to owls, game birds, waterfowl, waders): a farm bird
# that ImageNet takes for a partridge or a grouse is still a bird, and never has FMD.
BIRD_CLASSES: tuple[int, ...] = (*range(7, 25), *range(80, 101), *range(127, 147))
FARM_CLASSES: tuple[int, ...] = tuple(sorted({i for v in SPECIES_CLASSES.values() for i in v}))
# The hoofed animals FMD infects, as ImageNet sees them: the farm classes but the birds,
# plus the goat-like bovids.
HOOFED_CLASSES: tuple[int, ...] = tuple(sorted(
    {i for s, v in SPECIES_CLASSES.items() if s not in ("chicken", "duck") for i in v}
    | set(CAPRINE_CLASSES)))
# A whole four-legged animal to ImageNet: the hoofed classes plus its dogs (151-268),
# where whole goats and spotted cows often land; an eye or udder close-up gets little here.
QUADRUPED_CLASSES: tuple[int, ...] = tuple(sorted(set(HOOFED_CLASSES) | set(range(151, 269))))
SPECIES_ES = {"chicken": "gallina", "duck": "pato", "cow": "vaca", "pig": "cerdo",
              "sheep": "oveja", "goat": "cabra", "horse": "caballo", "camelid": "camélido",
              "unknown": "desconocida"}


def farm_mass(imagenet_probs: torch.Tensor) -> torch.Tensor:
    """Probability mass on farm-animal classes, per row."""
    return imagenet_probs[..., list(FARM_CLASSES)].sum(-1)


def bird_mass(imagenet_probs: torch.Tensor) -> torch.Tensor:
    """Probability mass on every ImageNet bird class, per row."""
    return imagenet_probs[..., list(BIRD_CLASSES)].sum(-1)


def hoofed_mass(imagenet_probs: torch.Tensor) -> torch.Tensor:
    """Probability mass on hoofed farm species and the goat-like bovids (what FMD infects)."""
    return imagenet_probs[..., list(HOOFED_CLASSES)].sum(-1)


def species_scores(
    imagenet_probs: torch.Tensor, species: tuple[str, ...] | None = None
) -> torch.Tensor:
    """Summed ImageNet probability per species (columns in ``species`` order)."""
    names = species or tuple(SPECIES_CLASSES)
    return torch.stack([imagenet_probs[..., list(SPECIES_CLASSES[s])].sum(-1) for s in names], -1)


def guess_species(imagenet_probs: torch.Tensor) -> tuple[str, float]:
    """The most likely species of one image and its summed probability."""
    scores = species_scores(imagenet_probs)
    k = int(scores.argmax())
    return tuple(SPECIES_CLASSES)[k], float(scores[k])


# ImageNet-1k indices 0-397 are organisms (fish, birds, reptiles, mammals, insects);
# 398 onward are objects and scenes, where documents, cars and fields land.
ANIMAL_CLASSES = range(0, 398)
# Farm-animal mass above this passes the gate outright. Scanned pages stay below
# 0.02; see bench/vet_eval.py and the model card for the measurements.
FARM_MIN = 0.05
# Printed matter in ImageNet: website, menu, dust jacket, comic book, crossword,
# envelope, binder, packet, slide rule, jigsaw puzzle, maze, scoreboard. A photo
# that looks like these is never let through on feature similarity alone.
DOCUMENT_CLASSES: tuple[int, ...] = (916, 922, 921, 917, 918, 549, 446, 692, 798, 611, 646, 781)
DOCUMENT_MAX = 0.1


def animal_mass(imagenet_probs: torch.Tensor) -> torch.Tensor:
    """Probability mass on any animal class, per row (reported, not gated on)."""
    return imagenet_probs[..., ANIMAL_CLASSES.start: ANIMAL_CLASSES.stop].sum(-1)


def is_livestock(
    imagenet_probs: torch.Tensor,
    prototype_similarity: float | None = None,
    threshold: float | None = None,
) -> bool:
    """The gate: enough farm-animal mass, or close to the training photos.

    Close-ups of a lesion, an eye or an udder often get little farm-animal mass
    (ImageNet calls them "mask" or "velvet"), so a nearest-neighbour match to
    the condition training photos in ImageNet feature space also passes, unless
    the photo looks like printed matter.
    """
    if float(farm_mass(imagenet_probs)) >= FARM_MIN:
        return True
    if float(document_mass(imagenet_probs)) >= DOCUMENT_MAX:
        return False
    return (prototype_similarity is not None and threshold is not None
            and float(prototype_similarity) >= threshold)


def document_mass(imagenet_probs: torch.Tensor) -> torch.Tensor:
    """Probability mass on printed-matter classes, per row."""
    return imagenet_probs[..., list(DOCUMENT_CLASSES)].sum(-1)
