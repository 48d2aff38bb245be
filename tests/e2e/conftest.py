"""One app for the browser modules that need the default settings: an app start is the
slow part of a browser test. A module that needs other settings defines its own."""

from __future__ import annotations

import pytest

from tests.e2e.harness import chromium_path, running_app


@pytest.fixture(scope="session")
def app_url():
    chromium_path()  # skip (or fail in CI) before paying for the app start
    with running_app() as url:
        yield url
