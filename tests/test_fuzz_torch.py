"""A short seeded slice of the differential fuzzer (``fuzz_torch.py``): the kit
and PyTorch, called the same way on the same random inputs, must agree --
outcome, values, dtypes, graph nodes, gradients, messages and warnings --
except for the differences ``fuzz_torch.DELIBERATE`` documents (and, until
they are fixed, those ``fuzz_torch.KNOWN_GAPS`` lists).

The full run is ``python tests/fuzz_torch.py --cases 15000 --seed N``."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

import fuzz_torch  # noqa: E402

CASES = 1500
SLICES = 6  # (the same 1,500 cases, in slices that can run on different cores)


@pytest.mark.parametrize("part", range(SLICES))
def test_a_seeded_slice_agrees_with_pytorch(part):
    size = CASES // SLICES
    report = fuzz_torch.run(size, 0, strict=False, first=part * size)
    assert report.cases == size
    assert not report.differences, fuzz_torch.summary(report, show=2)


def test_enough_variants():
    assert len(fuzz_torch.VARIANTS) >= 400
    assert len({v.name for v in fuzz_torch.VARIANTS}) == len(fuzz_torch.VARIANTS)


def test_every_deliberate_difference_has_a_reason():
    for table in (fuzz_torch.DELIBERATE, fuzz_torch.KNOWN_GAPS):
        for (category, pattern), reason in table.items():
            assert category in fuzz_torch.CATEGORIES, category
            assert pattern and reason
