"""Shared fixtures: devices to run on, and PyTorch as an optional oracle."""
import numpy as np
import pytest

import autograd_kit as ak


def _devices():
    devs = [pytest.param("cpu", id="cpu")]
    reason = "no cupy/GPU available" if not ak.cuda.is_available() else None
    devs.append(pytest.param("cuda", id="cuda",
                             marks=pytest.mark.skipif(reason is not None, reason=reason or "")))
    return devs


DEVICES = _devices()


@pytest.fixture(params=DEVICES)
def device(request):
    """Every test that takes ``device`` runs on the CPU and, when present, on the GPU."""
    return request.param


@pytest.fixture
def rng():
    return np.random.default_rng(1234)
