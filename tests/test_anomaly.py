"""Anomaly detection: the switches, the forward traceback kept on each node, the
"Error detected in ..." warning and the NaN check -- PyTorch as the oracle for
every message where it is installed."""
import inspect
import warnings

import pytest

import autograd_kit as ak
from autograd_kit.autograd import anomaly


@pytest.fixture(autouse=True)
def anomaly_off():
    """Every test starts and ends with anomaly detection off (its default)."""
    ak.autograd.set_detect_anomaly(False)
    yield
    ak.autograd.set_detect_anomaly(False)
    torch = _torch_or_none()
    if torch is not None:
        torch.autograd.set_detect_anomaly(False)


def _torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


def collect(fn):
    """Run ``fn``; return (the exception it raised or None, its UserWarnings' texts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's 0/0 notes
        try:
            fn()
            err = None
        except RuntimeError as e:
            err = e
    return err, [w for w in caught if issubclass(w.category, UserWarning)]


# -- a forward pass whose backward fails, identical for both libraries -----------

def saved_changed(lib):
    """exp saves its result; changing it in place breaks ExpBackward0."""
    x = lib.ones(3, requires_grad=True)
    y = x.exp()  # FORWARD LINE
    z = y * 2
    y.add_(1)
    return z.sum(), x


FORWARD_LINE = inspect.getsourcelines(saved_changed)[1] + 3  # the `y = x.exp()` line


def nan_graph(lib):
    """sqrt at 0 has gradient inf; times 0 it is NaN in SqrtBackward0's output."""
    x = lib.zeros(3, requires_grad=True)
    return (x.sqrt() * 0).sum(), x


def nan_second_input(lib):
    """a * b with b = inf: MulBackward0's gradient for b is fine, for a it is NaN."""
    a = lib.tensor([1.0], requires_grad=True)
    b = lib.tensor([float("inf")], requires_grad=True)
    return (a * b * 0).sum(), a


# -- the switches ---------------------------------------------------------------

def test_off_by_default_with_nan_checking_armed():
    assert ak.autograd.is_anomaly_enabled() is False
    assert ak.autograd.is_anomaly_check_nan_enabled() is True


def test_plain_call_sets_the_global_mode():
    ak.autograd.set_detect_anomaly(True)
    assert ak.autograd.is_anomaly_enabled()
    ak.autograd.set_detect_anomaly(True, check_nan=False)
    assert ak.autograd.is_anomaly_enabled() and not ak.autograd.is_anomaly_check_nan_enabled()
    ak.autograd.set_detect_anomaly(False)
    assert not ak.autograd.is_anomaly_enabled()


def test_context_manager_restores_the_previous_setting():
    with ak.autograd.set_detect_anomaly(True, check_nan=False):
        assert ak.autograd.is_anomaly_enabled()
        assert not ak.autograd.is_anomaly_check_nan_enabled()
        with ak.autograd.set_detect_anomaly(False):
            assert not ak.autograd.is_anomaly_enabled()
        assert ak.autograd.is_anomaly_enabled()
    assert not ak.autograd.is_anomaly_enabled()
    assert ak.autograd.is_anomaly_check_nan_enabled()


def test_context_manager_restores_after_an_error():
    with pytest.raises(ZeroDivisionError), pytest.warns(UserWarning):
        with ak.autograd.detect_anomaly(check_nan=False):
            1 / 0
    assert not ak.autograd.is_anomaly_enabled()
    assert ak.autograd.is_anomaly_check_nan_enabled()


def test_detect_anomaly_warns_as_pytorch_does():
    torch = _torch_or_none()
    if torch is not None:
        _, caught = collect(lambda: torch.autograd.detect_anomaly())
        expected = str(caught[0].message)
    else:
        expected = anomaly.ENABLED_WARNING
    with pytest.warns(UserWarning) as record:
        with ak.autograd.detect_anomaly():
            assert ak.autograd.is_anomaly_enabled()
    messages = [str(w.message) for w in record]
    assert expected in messages
    assert record[0].filename == __file__  # it points at the `with` line
    assert not ak.autograd.is_anomaly_enabled()


def test_set_detect_anomaly_does_not_warn():
    _, caught = collect(lambda: ak.autograd.set_detect_anomaly(True))
    assert caught == []


def test_detect_anomaly_as_a_decorator():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        @ak.autograd.detect_anomaly(check_nan=False)
        def inside():
            return (ak.autograd.is_anomaly_enabled(),
                    ak.autograd.is_anomaly_check_nan_enabled())
    assert inside() == (True, False)
    assert not ak.autograd.is_anomaly_enabled()


# -- recording ------------------------------------------------------------------

def test_nothing_is_recorded_when_off():
    x = ak.ones(3, requires_grad=True)
    y = (x.exp() * 2).sum()
    for fn in (y.grad_fn, y.grad_fn.next_functions[0][0],
               y.grad_fn.next_functions[0][0].next_functions[0][0]):
        assert fn._extra is None  # not even an empty metadata dict was made
        assert fn.metadata == {}


def test_each_node_records_its_forward_line():
    with ak.autograd.set_detect_anomaly(True):
        out, _ = saved_changed(ak)
    exp_node = out.grad_fn.next_functions[0][0].next_functions[0][0]
    assert exp_node.name() == "ExpBackward0"
    trace = exp_node.metadata[anomaly.TRACE_KEY]
    assert all(isinstance(line, str) for line in trace)
    assert f'File "{__file__}", line {FORWARD_LINE}, in saved_changed' in trace[-1]
    assert "y = x.exp()" in trace[-1]
    assert not any("autograd_kit" + "/" in line for line in trace)  # no kit frames


def test_custom_function_nodes_record_too():
    class Double(ak.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = ak.ones(2, requires_grad=True)
    with ak.autograd.set_detect_anomaly(True):
        y = Double.apply(x)  # CUSTOM LINE
    assert "y = Double.apply(x)  # CUSTOM LINE" in y.grad_fn.metadata[anomaly.TRACE_KEY][-1]


def test_torch_records_the_same_innermost_frame():
    torch = pytest.importorskip("torch")
    with torch.autograd.set_detect_anomaly(True):
        out_t, _ = saved_changed(torch)
    with ak.autograd.set_detect_anomaly(True):
        out_k, _ = saved_changed(ak)
    theirs = out_t.grad_fn.next_functions[0][0].next_functions[0][0].metadata["traceback_"]
    ours = out_k.grad_fn.next_functions[0][0].next_functions[0][0].metadata["traceback_"]
    assert ours[-1] == theirs[-1]  # the forward line, formatted alike
    assert len(ours) <= len(theirs)  # (PyTorch also lists pytest's frames)


# -- the warning on failure -------------------------------------------------------

RUNS = {
    "backward": lambda out, x: out.backward(),
    "grad": lambda out, x: ak.autograd.grad(out, x),
    "backward_steps": lambda out, x: list(ak.autograd.backward_steps(out)),
}


@pytest.mark.parametrize("run", RUNS, ids=list(RUNS))
def test_failure_warns_with_the_forward_traceback(run):
    with ak.autograd.set_detect_anomaly(True):
        out, x = saved_changed(ak)
        err, caught = collect(lambda: RUNS[run](out, x))
    assert "modified by an inplace operation" in str(err)
    assert len(caught) == 1
    text = str(caught[0].message)
    assert text.startswith("Error detected in ExpBackward0. Traceback of forward call that "
                           "caused the error:\n")
    assert f'line {FORWARD_LINE}, in saved_changed\n    y = x.exp()  # FORWARD LINE' in text
    assert caught[0].filename == __file__  # the warning points at the learner's call


def test_warning_has_pytorchs_shape():
    torch = pytest.importorskip("torch")
    with torch.autograd.set_detect_anomaly(True):
        out, _ = saved_changed(torch)
        _, theirs = collect(out.backward)
    with ak.autograd.set_detect_anomaly(True):
        out, _ = saved_changed(ak)
        _, ours = collect(out.backward)
    theirs, ours = str(theirs[0].message), str(ours[0].message)
    assert theirs.splitlines()[0] == ours.splitlines()[0]
    # PyTorch then lists every frame (pytest's too) and ends with its C++ location;
    # the frames before that end as ours do, with the forward line
    last_frame = "  File " + ours.split("\n  File ")[-1]
    assert last_frame.endswith("y = x.exp()  # FORWARD LINE")
    assert theirs.split(" (Triggered internally")[0].rstrip("\n").endswith(last_frame)


def test_error_message_hint_changes_as_pytorchs_does():
    torch = _torch_or_none()
    for on in (False, True):
        with ak.autograd.set_detect_anomaly(on):
            out, _ = saved_changed(ak)
            err, _ = collect(out.backward)
        hint = str(err).split("Hint: ")[1]
        assert ("backtrace further above" in hint) == on
        assert ("set_detect_anomaly(True" in hint) == (not on)
        if torch is not None:
            with torch.autograd.set_detect_anomaly(on):
                out, _ = saved_changed(torch)
                theirs, _ = collect(out.backward)
            assert str(err) == str(theirs)


def test_no_warning_when_off():
    out, _ = saved_changed(ak)
    err, caught = collect(out.backward)
    assert err is not None and caught == []


def test_nodes_made_before_it_was_on_have_no_forward_traceback():
    out, _ = saved_changed(ak)
    with ak.autograd.set_detect_anomaly(True):
        err, caught = collect(out.backward)
    assert err is not None and len(caught) == 1
    ours = str(caught[0].message)
    assert ours.startswith("Error detected in ExpBackward0. No forward pass information")
    torch = _torch_or_none()
    if torch is not None:  # PyTorch says the same (then where in its C++ it said it)
        out, _ = saved_changed(torch)
        with torch.autograd.set_detect_anomaly(True):
            _, caught = collect(out.backward)
        assert str(caught[0].message).startswith(ours)


def test_errors_from_user_code_in_backward_are_reported_too():
    class Broken(ak.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    with ak.autograd.set_detect_anomaly(True):
        x = ak.ones(2, requires_grad=True)
        y = Broken.apply(x).sum()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="broken backward"):
                y.backward()
    assert "Error detected in BrokenBackward" in str(caught[0].message)
    assert "y = Broken.apply(x).sum()" in str(caught[0].message)


# -- check_nan --------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # numpy's inf * 0
@pytest.mark.parametrize("make", [nan_graph, nan_second_input], ids=["sqrt", "mul"])
@pytest.mark.parametrize("run", RUNS, ids=list(RUNS))
def test_nan_gradient_raises_pytorchs_error(make, run):
    with ak.autograd.set_detect_anomaly(True):
        out, x = make(ak)
        err, caught = collect(lambda: RUNS[run](out, x))
    assert str(err).endswith("returned nan values in its 0th output.")
    assert "Error detected in" in str(caught[0].message)  # where the node was made, too
    torch = _torch_or_none()
    if torch is not None:
        with torch.autograd.set_detect_anomaly(True):
            out, x = make(torch)
            theirs, _ = collect(lambda: out.backward())
        assert str(err) == str(theirs)


def test_nan_check_off():
    with ak.autograd.set_detect_anomaly(True, check_nan=False):
        out, x = nan_graph(ak)
        err, _ = collect(out.backward)
    assert err is None
    assert ak.isnan(x.grad).all()


def test_nan_is_not_checked_when_anomaly_detection_is_off():
    out, x = nan_graph(ak)
    err, _ = collect(out.backward)
    assert err is None and ak.isnan(x.grad).all()


# -- nodes made by backward formulas (create_graph=True) ----------------------------

def test_nodes_made_during_backward_remember_their_parent():
    def first_derivative(lib):
        x = lib.tensor([1.0, 4.0], requires_grad=True)
        g, = lib.autograd.grad(x.sqrt().sum(), x, create_graph=True)
        meta = g.grad_fn.metadata
        return g.grad_fn.name(), meta[anomaly.PARENT_KEY if lib is ak else "parent_"].name()

    with ak.autograd.set_detect_anomaly(True):
        ours = first_derivative(ak)
    assert ours[1] == "SqrtBackward0"
    torch = _torch_or_none()
    if torch is not None:
        with torch.autograd.set_detect_anomaly(True):
            assert first_derivative(torch) == ours
    x = ak.tensor([1.0], requires_grad=True)
    g, = ak.autograd.grad(x.exp().sum(), x, create_graph=True)
    assert g.grad_fn._extra is None  # off: nothing recorded, no parent either


class Square(ak.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * NoSecondDerivative.apply(x)  # MADE DURING BACKWARD


class NoSecondDerivative(ak.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("no second derivative here")


def test_a_failing_node_made_during_backward_names_its_parent():
    with ak.autograd.set_detect_anomaly(True):
        x = ak.tensor([1.0, 2.0], requires_grad=True)
        y = Square.apply(x).sum()  # THE FORWARD CALL
        g, = ak.autograd.grad(y, x, create_graph=True)
        err, caught = collect(lambda: ak.autograd.grad(g.sum(), x))
    assert str(err) == "no second derivative here"
    first, second = (str(w.message) for w in caught)
    assert first.startswith("Error detected in NoSecondDerivativeBackward. Traceback of "
                            "forward call that caused the error:\n")
    assert first.endswith("# MADE DURING BACKWARD")  # made in Square.backward...
    assert "g, = ak.autograd.grad(y, x, create_graph=True)" in first  # ...during this call
    assert "autograd_kit" + "/" not in first  # (the engine's frames are left out)
    assert second.startswith("\n\nPrevious calculation was induced by SquareBackward. "
                             "Traceback of forward call that induced the previous "
                             "calculation:\n")
    assert second.endswith("y = Square.apply(x).sum()  # THE FORWARD CALL")
    assert not ak.autograd.is_anomaly_enabled()
