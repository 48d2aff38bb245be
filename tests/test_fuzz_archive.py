"""A fixed-seed slice of bench/fuzz_archive.py: mutated real PDFs never crash or hang."""

from __future__ import annotations

from collections import Counter

from bench.fuzz_archive import MUTATIONS, fuzz


def test_twenty_mutated_pdfs_end_cleanly(shared_data):
    outcomes = fuzz(20, seed=1, timeout=60, shared=shared_data, progress=False)
    counts = Counter(o.kind for o in outcomes)
    bad = [o for o in outcomes if o.kind in ("crash", "hang")]
    assert not bad, bad
    assert counts["success"] + counts["clear_error"] == 20
    assert {o.mutation for o in outcomes} == set(MUTATIONS)
