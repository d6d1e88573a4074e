"""The stand-in device refuses what cupy refuses: these tests keep it strict.

If the stand-in let something through that cupy refuses, the GPU cases of the
suite would pass here and fail on a real GPU; so each difference from numpy
that the stand-in imitates is checked here, refusal by refusal.
"""
import numpy as np
import pytest

import autograd_kit as ak
import conftest
import cupy_api
import standin_device as sd

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly.")
cp = sd.module


@pytest.fixture(autouse=True)
def _own_refusals():
    """These tests provoke refusals on purpose: they read and clear the record."""
    del sd.VIOLATIONS[:]
    yield
    del sd.VIOLATIONS[:]


def refused(fn, exc=TypeError, message=IMPLICIT):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == message
    assert sd.VIOLATIONS, "a refusal must also be recorded"
    del sd.VIOLATIONS[:]


def test_no_implicit_conversion_to_numpy():
    a = cp.asarray([1.0, 2.0])
    refused(lambda: np.asarray(a))
    refused(lambda: np.array(a))
    refused(lambda: a.__array__())
    refused(lambda: np.exp(a))                 # a numpy ufunc
    refused(lambda: np.concatenate([a, a]))    # a numpy function
    refused(lambda: np.array2string(a))        # printing through numpy
    refused(lambda: cp.asarray([a, a]))        # a list of device arrays


def test_host_and_device_arrays_do_not_mix():
    a, h = cp.asarray([1.0, 2.0]), np.array([1.0, 2.0])
    message = "Unsupported type <class 'numpy.ndarray'>"
    for op in (lambda: a + h, lambda: a * np.array(2.0), lambda: cp.maximum(a, h),
               lambda: cp.where(a > 1, a, h)):
        refused(op, TypeError, message)

    def put():
        a[...] = h
    refused(put, TypeError, message)
    # numbers, Python's or numpy's, are fine; so are host index arrays
    assert (a * 2 + np.float32(1) - 3.0).tolist() == [0.0, 2.0]
    assert (np.float64(2) * a).tolist() == [2.0, 4.0]
    assert a[np.array([1, 0])].tolist() == [2.0, 1.0]


def test_explicit_transfers_and_syncs():
    a = cp.asarray([[1.0, 2.0], [3.0, 4.0]])
    host = a.get()
    assert type(host) is np.ndarray and host.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert type(cp.asnumpy(a)) is np.ndarray
    s = a.sum()
    assert type(s) is cp.ndarray and s.ndim == 0          # a 0-d device array, not a scalar
    assert type(a[0, 1]) is cp.ndarray and type(a.max(axis=0)) is cp.ndarray
    assert float(s) == 10.0 and s.item() == 10.0 and bool(a[0, 0] == 1.0) and int(s) == 10
    assert sd.VIOLATIONS == []


def test_only_the_backend_moves_data_to_the_host(monkeypatch):
    a = cp.asarray([1.0])

    def from_module(module_name, code):
        namespace = {"__name__": module_name, "a": a, "cp": cp}
        exec(code, namespace)  # noqa: S102 - our own code, in a module of that name

    from_module("autograd_kit.backend", "a.get(); cp.asnumpy(a)")
    assert sd.VIOLATIONS == []
    for code in ("a.get()", "cp.asnumpy(a)", "a.tolist()"):
        from_module("autograd_kit.viz.labels", code)
        assert len(sd.VIOLATIONS) == 1 and "autograd_kit.viz.labels" in sd.VIOLATIONS[0]
        del sd.VIOLATIONS[:]


@pytest.mark.skipif(cupy_api.cupy is None, reason="the test extra installs cupy")
def test_only_cupys_names_and_signatures():
    a = cp.asarray([3.0, 1.0, 2.0])
    assert not hasattr(cupy_api.cupy.ndarray, "resize") and hasattr(np.ndarray, "resize")
    refused(lambda: a.resize(2), AttributeError,
            "'cupy.ndarray' object has no attribute 'resize'")
    missing = sorted(n for n in dir(np) if not n.startswith("_") and callable(getattr(np, n))
                     and not hasattr(cupy_api.cupy, n))[0]
    refused(lambda: getattr(cp, missing), AttributeError,
            f"module 'cupy' has no attribute '{missing}'")
    assert np.array([3.0]).max(initial=5.0) == 5.0
    with pytest.raises(TypeError, match="cupy.ndarray.max does not accept"):
        a.max(initial=5.0)                           # numpy has 'initial', cupy has not
    del sd.VIOLATIONS[:]
    with pytest.raises(TypeError, match="cupy.clip does not accept"):
        cp.clip(a, a_min=1, max=2)                   # numpy 2's 'max', cupy has only a_max
    del sd.VIOLATIONS[:]
    assert cp.clip(a, 1, 2).tolist() == [2.0, 1.0, 2.0]


@pytest.mark.skipif(not conftest.STANDIN, reason="a real GPU serves 'cuda' here")
def test_a_refusal_the_kit_hides_still_fails_the_test(pytester):
    """conftest.py turns any recorded refusal into a failure of the GPU case."""
    pytester.makeconftest(
        "import sys\n"
        f"sys.path.insert(0, {str(pytester_root())!r})\n"
        f"exec(open({str(pytester_root() / 'conftest.py')!r}).read())\n")
    pytester.makepyfile(test_hidden="""
        import numpy as np
        import autograd_kit as ak

        def test_hidden(device):
            t = ak.ones(2, device=device)
            try:
                np.asarray(t._data)       # refused on the device, and the refusal swallowed
            except TypeError:
                pass
        """)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-o", "addopts=")
    result.assert_outcomes(passed=2, errors=1)  # cpu, cuda; cuda fails at teardown
    result.stdout.fnmatch_lines([
        "*the stand-in GPU refused*", "*TypeError: Implicit conversion*",
        "*GPU-path cases executed: 1 on the strict stand-in*(0 passed, 1 failed*"])


def pytester_root():
    import pathlib
    return pathlib.Path(__file__).resolve().parent


@pytest.mark.skipif(not conftest.STANDIN, reason="a real GPU serves 'cuda' here")
def test_the_kit_sees_one_gpu():
    assert ak.cuda.is_available() and ak.cuda.device_count() == 1
    ak.cuda.synchronize()
