from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import tiny_models

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BORDE_SHARED_DATA", ROOT.parent / "shared" / "data"))

# Nothing in a test may reach a hub, and ZeroGPU must stay off.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.pop("SPACES_ZERO_GPU", None)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real test data not found at {SHARED_DATA} (set BORDE_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_classifier_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_models.build_image_classifier(tmp_path_factory.mktemp("tiny-classifier"))


@pytest.fixture(scope="session")
def tiny_sdxl_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_models.build_sdxl(tmp_path_factory.mktemp("tiny-sdxl"))
