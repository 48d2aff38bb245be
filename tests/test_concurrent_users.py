"""A short slice of bench/load_test.py: concurrent users each get their own outputs."""

from __future__ import annotations

import pytest

from bench.load_test import run

pytestmark = pytest.mark.e2e


def test_four_users_mixing_vet_and_archive_jobs(shared_data):
    pytest.importorskip("gradio_client")
    res = run(clients=4, seconds=15, shared=shared_data)
    assert not res["errors"], res["errors"][:3]
    assert not res["crossed"], res["crossed"][:3]
    assert len(res["latency"].get("vet_run", [])) >= 4
    assert len(res["latency"].get("archive_run", [])) >= 2
    # The server holds no model between requests: RSS stays well under a model per user.
    assert 0 < res["peak_rss_mb"] < 2500
