"""``load`` as an adversary sees it: files that try to run code, files that are
not checkpoints at all, and the round trips that must keep working.

Every hostile file here would write a marker file if any of its code ran; each
test asserts that the marker is absent and that the refusal says what it
refused and how to load the file anyway (``weights_only=False``,
``add_safe_globals``).  Where PyTorch is installed, ``torch.load`` is given
the same file and must raise the same class of exception.
"""
import collections
import io
import os
import pickle
import pickletools
import subprocess
import warnings
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import autograd_kit as ak
from autograd_kit import nn
from autograd_kit.serialization import (add_safe_globals, clear_safe_globals,
                                        get_safe_globals, safe_globals)

REFUSED = "Weights only load failed"
# what pickle says about a file it cannot read: never shown to the learner
PICKLE_INTERNALS = ("persistent id instruction", "invalid load key", "Ran out of input",
                    "pickle data was truncated", "could not find MARK", "unpickling stack",
                    "Memo value not found")


def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


def same_class_as_torch(path, error_type):
    """``torch.load`` raises ``error_type`` for the same file (where PyTorch is installed)."""
    torch = torch_or_none()
    if torch is not None:
        with warnings.catch_warnings(), pytest.raises(error_type):
            warnings.simplefilter("ignore")  # (its notes on pickle protocols, TorchScript)
            torch.load(path)


@pytest.fixture(autouse=True)
def no_leftover_safe_globals():
    clear_safe_globals()
    yield
    clear_safe_globals()


@pytest.fixture
def marker(tmp_path):
    return tmp_path / "code_ran"


class Call:
    """Pickles as "call ``fn(*args)``" -- what a hostile ``__reduce__`` does."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


class Config:
    """A user's class, with a tensor inside, for ``add_safe_globals``."""

    def __init__(self, name, weight):
        self.name, self.weight = name, weight


def write(path, obj, protocol=2):
    with open(path, "wb") as fh:
        pickle.dump(obj, fh, protocol=protocol)
    return path


def assert_refused(load, path, marker, name, *, blocked=False):
    """``load()`` raises the refusal naming ``name``, and no code ran."""
    with pytest.raises(pickle.UnpicklingError) as info:
        load()
    assert not marker.exists(), "the file's code ran"
    text = str(info.value)
    assert text.startswith(REFUSED) and f"GLOBAL {name}" in text
    assert "weights_only=False" in text and "trust" in text
    assert ("add_safe_globals" in text) is not blocked
    if path is not None:
        same_class_as_torch(path, pickle.UnpicklingError)
        assert not marker.exists(), "torch.load ran the file's code"
    return text


# ----------------------------------------------------------- hostile files --
def test_os_system_does_not_run(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(os.system, f"touch {marker}"))
    text = assert_refused(lambda: ak.load(path), path, marker, os.system.__module__ + ".system",
                          blocked=True)
    assert "never admitted" in text


def test_os_system_stays_refused_even_when_admitted(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(os.system, f"touch {marker}"))
    add_safe_globals([os.system])
    assert_refused(lambda: ak.load(path), None, marker, os.system.__module__ + ".system",
                   blocked=True)


def test_subprocess_does_not_run(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(subprocess.check_call, ["touch", str(marker)]))
    assert_refused(lambda: ak.load(path), path, marker, "subprocess.check_call")


@pytest.mark.parametrize("fn", [eval, exec])
def test_builtins_eval_and_exec_do_not_run(tmp_path, marker, fn):
    path = write(tmp_path / "evil.pt", Call(fn, f"open({str(marker)!r}, 'w').close()"))
    assert_refused(lambda: ak.load(path), path, marker, f"builtins.{fn.__name__}")


def test_getattr_chain_does_not_run(tmp_path, marker):
    # getattr(__import__('os'), 'system')('touch marker'), written by hand
    chain = (b"cbuiltins\ngetattr\n(cbuiltins\n__import__\n(S'os'\ntRS'system'\ntR(S'touch "
             + str(marker).encode() + b"'\ntR.")
    path = tmp_path / "evil.pt"
    path.write_bytes(chain)
    assert_refused(lambda: ak.load(path), path, marker, "builtins.getattr")


def test_numpy_functions_other_than_the_array_rebuild_are_refused(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(np.savetxt, str(marker), [1.0]))
    assert_refused(lambda: ak.load(path), path, marker, f"{np.savetxt.__module__}.savetxt")
    # numpy.load of a pickled object array: a second pickle, with os.system in it
    inner = tmp_path / "inner.npy"
    np.save(inner, np.array([Call(os.system, f"touch {marker}")], dtype=object),
            allow_pickle=True)
    path = write(tmp_path / "evil2.pt", {"w": ak.ones(2), "x": Call(np.load, str(inner), None,
                                                                   True)})
    assert_refused(lambda: ak.load(path), path, marker, f"{np.load.__module__}.load")


def test_numpy_testing_is_refused(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(np.testing.assert_equal, 1, 1))
    name = f"{np.testing.assert_equal.__module__}.assert_equal"
    assert_refused(lambda: ak.load(path), path, marker, name)


def test_a_numpy_array_of_objects_is_refused(tmp_path, marker):
    evil = np.array([Call(os.system, f"touch {marker}")], dtype=object)
    path = write(tmp_path / "evil.pt", {"a": evil})
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert not marker.exists() and str(info.value).startswith(REFUSED)


def test_payload_inside_a_dict_of_tensors(tmp_path, marker):
    obj = {"w": ak.randn(3, 2), "b": ak.zeros(2), "z": Call(os.system, f"touch {marker}")}
    path = write(tmp_path / "evil.pt", obj)
    assert_refused(lambda: ak.load(path), path, marker, os.system.__module__ + ".system",
                   blocked=True)


def test_payload_inside_an_ordered_dict(tmp_path, marker):
    sd = nn.Linear(2, 2).state_dict()
    sd["evil"] = Call(subprocess.check_call, ["touch", str(marker)])
    path = write(tmp_path / "evil.pt", sd)
    assert_refused(lambda: ak.load(path), path, marker, "subprocess.check_call")


def test_payload_through_load_state_dict(tmp_path, marker):
    model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    sd = model.state_dict()
    sd["0.weight"] = Call(eval, f"open({str(marker)!r}, 'w').close()")
    path = write(tmp_path / "evil.pt", sd)
    before = [p.tolist() for p in model.parameters()]
    assert_refused(lambda: model.load_state_dict(ak.load(path)), path, marker, "builtins.eval")
    assert [p.tolist() for p in model.parameters()] == before


@pytest.mark.parametrize("map_location", ["cpu", ak.device("cpu"), {"cpu": "cpu"},
                                          lambda storage, location: storage])
def test_payload_with_map_location(tmp_path, marker, map_location):
    path = write(tmp_path / "evil.pt", [ak.ones(2), Call(os.system, f"touch {marker}")])
    assert_refused(lambda: ak.load(path, map_location=map_location), path, marker,
                   os.system.__module__ + ".system", blocked=True)


def test_payload_with_weights_only_true_spelled_out(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(exec, f"open({str(marker)!r}, 'w').close()"))
    assert_refused(lambda: ak.load(path, weights_only=True), path, marker, "builtins.exec")


def test_payload_through_a_file_object_and_a_bytes_buffer(tmp_path, marker):
    path = write(tmp_path / "evil.pt", {"w": ak.ones(1), "x": Call(eval, "1")})

    def from_file():
        with open(path, "rb") as fh:
            ak.load(fh)

    assert_refused(from_file, path, marker, "builtins.eval")
    buffer = io.BytesIO(path.read_bytes())
    assert_refused(lambda: ak.load(buffer), None, marker, "builtins.eval")


@pytest.mark.parametrize("protocol", range(6))
def test_payload_in_every_pickle_protocol(tmp_path, marker, protocol):
    obj = {"w": ak.ones(2, 2), "x": Call(subprocess.check_call, ["touch", str(marker)])}
    path = write(tmp_path / "evil.pt", obj, protocol)
    assert_refused(lambda: ak.load(path), path, marker, "subprocess.check_call")


def test_a_kit_class_that_is_not_a_tensor_is_refused(tmp_path, marker):
    path = write(tmp_path / "evil.pt", Call(nn.Linear, 2, 2))
    text = assert_refused(lambda: ak.load(path), path, marker, "autograd_kit.nn.layers.Linear")
    assert "state_dict()" in text  # the hint for a whole model
    # a kit function that writes files is no rebuild either
    path = write(tmp_path / "evil2.pt", Call(ak.save, [1], str(marker)))
    assert_refused(lambda: ak.load(path), path, marker, "autograd_kit.serialization.save")


def test_a_whole_pickled_model_needs_the_opt_out(tmp_path, marker):
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    path = tmp_path / "model.pt"
    ak.save(model, path)
    text = assert_refused(lambda: ak.load(path), path, marker, "autograd_kit.nn.layers.Sequential")
    assert "model.state_dict()" in text


def build_on(target: bytes, state: bytes) -> bytes:
    """A protocol-2 pickle: push ``target``, then BUILD it with ``state``."""
    return b"\x80\x02" + target + state + b"b."


def test_a_file_cannot_change_the_kit_through_build():
    dtype_call = b"cautograd_kit.backend\n_dtype_by_name\nX\x07\x00\x00\x00float32\x85R"
    set_not_float = b"N}X\x11\x00\x00\x00is_floating_pointK\x00s\x86"
    attacks = {
        "a dtype": build_on(dtype_call, set_not_float),
        "the Size class": build_on(b"cautograd_kit.tensor\nSize\n", set_not_float),
        "the device class": build_on(b"cautograd_kit.backend\ndevice\n", set_not_float),
        "a rebuild function": build_on(b"cautograd_kit.tensor\n_rebuild\n",
                                       b"N}X\x0c\x00\x00\x00__defaults__)s\x86"),
    }
    for what, data in attacks.items():
        with pytest.raises(pickle.UnpicklingError) as info:
            ak.load(io.BytesIO(data))
        assert "cannot be loaded" in str(info.value), what
    assert ak.float32.is_floating_point and ak.tensor([1.5]).dtype is ak.float32
    assert not hasattr(ak.Size, "is_floating_point") and ak.Size([2]).numel() == 2
    assert ak.tensor([1.0]).device == ak.device("cpu")


def test_admitted_builtins_take_only_what_pickle_gives_them():
    attacks = {
        "a terabyte bytearray": b"\x80\x02c__builtin__\nbytearray\n\x8a\x06\x00\x10\xa5\xd4\xe8"
                                b"\x00\x85R.",
        "a terabyte of bytes": b"\x80\x02c__builtin__\nbytes\n\x8a\x06\x00\x10\xa5\xd4\xe8"
                               b"\x00\x85R.",
        "another codec": b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x06\x00\x00\x00rot_13"
                         b"\x86R.",
        "attributes on OrderedDict": build_on(b"ccollections\nOrderedDict\n",
                                              b"N}X\x03\x00\x00\x00popK\x00s\x86"),
    }
    for what, data in attacks.items():
        with pytest.raises(pickle.UnpicklingError) as info:
            ak.load(io.BytesIO(data))
        assert "cannot be loaded" in str(info.value), what
    assert callable(collections.OrderedDict.pop)


def test_a_tensor_cannot_be_given_a_history_or_hooks():
    data = pickle.dumps(ak.ones(2), protocol=2)
    # BUILD on the rebuilt tensor, setting _hooks and _grad_fn
    hostile = data[:-1] + b"N}(X\x06\x00\x00\x00_hooksK\x01X\x08\x00\x00\x00_grad_fnK\x01u\x86b."
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(io.BytesIO(hostile))
    assert "cannot be loaded" in str(info.value)


def test_numpy_is_admitted_only_for_a_tensor_s_values(tmp_path, marker):
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(write(tmp_path / "a.pt", {"a": np.ones(3)}))
    assert "GLOBAL numpy._core.multiarray._reconstruct" in str(info.value)
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(write(tmp_path / "d.pt", np.dtype("f4")))
    assert "GLOBAL numpy.dtype" in str(info.value)
    # _reconstruct asked to make something other than an ndarray
    hostile = (b"\x80\x02cnumpy._core.multiarray\n_reconstruct\ncsubprocess\nPopen\n"
               b"K\x00\x85C\x01b\x87R.")
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(io.BytesIO(hostile))
    assert "GLOBAL subprocess.Popen" in str(info.value) and not marker.exists()
    hostile = b"\x80\x02cnumpy._core.multiarray\n_reconstruct\nccollections\nOrderedDict\n" \
              b"K\x00\x85C\x01b\x87R."
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(io.BytesIO(hostile))
    assert "GLOBAL numpy._core.multiarray._reconstruct" in str(info.value)


def test_a_tensor_whose_bytes_do_not_fill_its_shape():
    data = pickle.dumps(ak.arange(4.0), protocol=2)
    values = ak.arange(4.0).numpy().tobytes().decode("latin-1")
    for op, arg, pos in pickletools.genops(data):
        if op.name == "BINUNICODE" and arg == values:
            end = pos + 5 + len(arg.encode("utf-8"))
            short = data[:pos] + b"X\x02\x00\x00\x00ab" + data[end:]
            break
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(io.BytesIO(short))
    assert_says(info.value, "cannot be loaded", "shape [4]")


def test_a_plain_pickle_with_a_persistent_id(tmp_path):
    path = tmp_path / "pid.pt"
    path.write_bytes(b"\x80\x02X\x03\x00\x00\x00keyQ.")
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    text = str(info.value)
    assert "persistent id" in text and "zip archive" in text
    assert not any(inner in text for inner in PICKLE_INTERNALS)


def test_a_torch_style_zip_with_a_payload(tmp_path, marker):
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("evil/data.pkl", pickle.dumps(Call(os.system, f"touch {marker}"), 2))
        archive.writestr("evil/byteorder", "little")
        archive.writestr("evil/version", "3\n")
    assert_refused(lambda: ak.load(path), path, marker, os.system.__module__ + ".system",
                   blocked=True)
    assert_refused(lambda: ak.load(path, weights_only=True), None, marker,
                   os.system.__module__ + ".system", blocked=True)


# ------------------------------------------------------- not a checkpoint --
def assert_says(error, *words):
    text = str(error)
    assert all(w in text for w in words), text
    assert not any(inner in text for inner in PICKLE_INTERNALS), text




def test_an_empty_file(tmp_path):
    path = tmp_path / "empty.pt"
    path.write_bytes(b"")
    with pytest.raises(EOFError) as info:
        ak.load(path)
    assert_says(info.value, "empty.pt", "empty")
    same_class_as_torch(path, EOFError)
    with pytest.raises(EOFError):
        ak.load(io.BytesIO())


def test_a_truncated_file(tmp_path):
    path = tmp_path / "cut.pt"
    ak.save({"w": ak.randn(20, 20)}, path)
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert_says(info.value, "cut.pt", "incomplete")
    same_class_as_torch(path, pickle.UnpicklingError)
    for cut in (3, 40, 1000, 1500):  # cut anywhere: the same kind of answer
        with pytest.raises(pickle.UnpicklingError) as info:
            ak.load(io.BytesIO(pickle.dumps({"w": ak.randn(20, 20)}, 2)[:cut]))
        assert_says(info.value, "cannot be loaded")


def test_random_bytes(tmp_path):
    path = tmp_path / "noise.pt"
    path.write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 300, dtype=np.uint8)))
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert_says(info.value, "noise.pt", "not a checkpoint")
    path.write_bytes(b"\xde\xad\xbe\xef" * 50)
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert_says(info.value, "not a checkpoint", "\\xde\\xad")
    same_class_as_torch(path, pickle.UnpicklingError)


def test_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError):
        ak.load(tmp_path)
    same_class_as_torch(tmp_path, IsADirectoryError)


@pytest.mark.parametrize("text", ["# my notes\nlearning rate 0.1\n", '{"lr": 0.1}\n',
                                  "hello world, this is text\n"])
def test_a_text_file(tmp_path, text):
    path = tmp_path / "notes.txt"
    path.write_text(text)
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert_says(info.value, "notes.txt", "text file", text.splitlines()[0][:20])
    if not text.startswith("hello"):  # (PyTorch gives a KeyError for that one)
        same_class_as_torch(path, pickle.UnpicklingError)


def test_a_numpy_file(tmp_path):
    path = tmp_path / "array.npy"
    np.save(path, np.ones(3))
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert_says(info.value, "numpy", "numpy.load")
    same_class_as_torch(path, pickle.UnpicklingError)


def test_zip_archives_that_are_not_checkpoints(tmp_path):
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("notes.txt", "hi")
    with pytest.raises(RuntimeError) as info:
        ak.load(path)
    assert_says(info.value, "other.zip", "zip archive", "torch.save")
    same_class_as_torch(path, RuntimeError)
    path = tmp_path / "cut.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("cut/data.pkl", pickle.dumps({"a": 1}, 2))
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(RuntimeError) as info:
        ak.load(path)
    assert_says(info.value, "cut.pt", "damaged or incomplete")
    same_class_as_torch(path, RuntimeError)


def test_a_file_opened_in_text_mode(tmp_path):
    path = tmp_path / "w.pt"
    ak.save({"a": ak.ones(1)}, path)
    with open(path, encoding="latin-1") as fh, pytest.raises(TypeError) as info:
        ak.load(fh)
    assert "'rb'" in str(info.value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_any_bytes_give_a_value_or_a_readable_error(data):
    try:
        ak.load(io.BytesIO(data))
    except (pickle.UnpicklingError, EOFError, RuntimeError) as error:
        assert not any(inner in str(error) for inner in PICKLE_INTERNALS), str(error)


_GOOD = pickle.dumps({"w": ak.arange(6.0).reshape(2, 3), "n": [1, (2.5, "x")],
                      "sd": nn.Linear(2, 2).state_dict()}, 2)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(_GOOD) - 1), st.integers(0, 255)), max_size=4),
       st.integers(1, len(_GOOD)))
def test_damaged_checkpoints_give_a_readable_error(flips, keep):
    data = bytearray(_GOOD[:keep])
    for where, value in flips:
        if where < len(data):
            data[where] = value
    try:
        ak.load(io.BytesIO(bytes(data)))
    except (pickle.UnpicklingError, EOFError, RuntimeError) as error:
        assert not any(inner in str(error) for inner in PICKLE_INTERNALS), str(error)


# ------------------------------------------------------------ round trips --
def test_state_dict_of_a_sequential(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    ak.save(model.state_dict(), path)
    loaded = ak.load(path)
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(model.state_dict())
    twin = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    assert not twin.load_state_dict(loaded).missing_keys
    x = ak.randn(5, 3)
    assert twin(x).tolist() == model(x).tolist()


DTYPES = [ak.float32, ak.float64, ak.float16, ak.int64, ak.int32, ak.int16, ak.int8, ak.uint8,
          ak.bool, ak.complex64, ak.complex128]


def sample(dt):
    values = ak.arange(12).reshape(3, 4) % 3
    return values.to(dt) if dt is not ak.bool else values > 0


@pytest.mark.parametrize("protocol", range(6))
def test_containers_of_tensors_of_every_dtype(tmp_path, protocol):
    tensors = {str(dt): sample(dt) for dt in DTYPES}
    obj = {"dict": tensors, "list": list(tensors.values()), "tuple": tuple(tensors.values()),
           "scalar": ak.tensor(2.5), "empty": ak.empty(0, 3), "long0d": ak.tensor(7),
           "transposed": ak.arange(6.0).reshape(2, 3).t(), "size": ak.Size([2, 3]),
           "dtype": ak.float16, "plain": [1, 2.5, "s", b"b", None, True, {1, 2}, 1 + 2j]}
    if protocol >= 2:
        obj["device"] = ak.device("cpu")
    path = tmp_path / "all.pt"
    ak.save(obj, path, pickle_protocol=protocol)
    back = ak.load(path)
    for name, t in tensors.items():
        for got in (back["dict"][name], back["list"][DTYPES.index(t.dtype)],
                    back["tuple"][DTYPES.index(t.dtype)]):
            assert type(got) is ak.Tensor and got.dtype is t.dtype and got.equal(t)
    assert back["scalar"].shape == () and back["scalar"].item() == 2.5
    assert back["long0d"].dtype is ak.int64 and back["long0d"].item() == 7
    assert back["empty"].shape == (0, 3) and back["empty"].dtype is ak.float32
    tr = back["transposed"]
    assert tr.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and not tr.is_contiguous()
    assert type(back["size"]) is ak.Size and back["size"] == (2, 3)
    assert back["dtype"] is ak.float16
    assert back["plain"] == [1, 2.5, "s", b"b", None, True, {1, 2}, 1 + 2j]
    if protocol >= 2:
        assert back["device"] == ak.device("cpu")
    tr.add_(1)  # the loaded memory is the tensor's own
    assert tr.tolist()[0] == [1.0, 4.0]


def test_requires_grad_and_parameters_as_pytorch(tmp_path):
    x = ak.tensor([1.0, 2.0], requires_grad=True)
    obj = {"leaf": x, "nonleaf": x * 2, "param": nn.Parameter(ak.ones(2)),
           "frozen": nn.Parameter(ak.ones(2), requires_grad=False), "plain": ak.ones(2)}
    path = tmp_path / "grad.pt"
    ak.save(obj, path)
    back = ak.load(path)
    assert back["leaf"].requires_grad and back["leaf"].is_leaf and back["leaf"].grad is None
    assert back["nonleaf"].requires_grad and back["nonleaf"].is_leaf  # as PyTorch
    assert type(back["param"]) is nn.Parameter and back["param"].requires_grad
    assert type(back["frozen"]) is nn.Parameter and not back["frozen"].requires_grad
    assert not back["plain"].requires_grad
    (back["leaf"] * 3).sum().backward()
    assert back["leaf"].grad.tolist() == [3.0, 3.0]
    torch = torch_or_none()
    if torch is not None:
        t = torch.tensor([1.0, 2.0], requires_grad=True)
        buffer = io.BytesIO()
        torch.save({"leaf": t, "nonleaf": t * 2}, buffer)
        buffer.seek(0)
        theirs = torch.load(buffer)
        for name in ("leaf", "nonleaf"):
            assert (theirs[name].requires_grad, theirs[name].is_leaf) == \
                (back[name].requires_grad, back[name].is_leaf)


def test_shared_tensors_stay_shared(tmp_path):
    t = ak.ones(3)
    path = tmp_path / "shared.pt"
    ak.save({"a": t, "b": t, "both": [t, t]}, path)
    back = ak.load(path)
    assert back["a"] is back["b"] is back["both"][0] is back["both"][1]


def test_several_objects_in_one_file_object():
    buffer = io.BytesIO()
    ak.save({"first": ak.ones(1)}, buffer)
    ak.save([ak.zeros(2)], buffer)
    buffer.seek(0)
    assert ak.load(buffer)["first"].tolist() == [1.0]
    assert ak.load(buffer)[0].tolist() == [0.0, 0.0]


def test_a_stream_that_cannot_seek():
    class Stream(io.RawIOBase):
        def __init__(self, data):
            self.data = io.BytesIO(data)

        def readable(self):
            return True

        def readinto(self, b):
            chunk = self.data.read(len(b))
            b[:len(chunk)] = chunk
            return len(chunk)

    buffer = io.BytesIO()
    ak.save({"w": ak.ones(2)}, buffer)
    assert ak.load(io.BufferedReader(Stream(buffer.getvalue())))["w"].tolist() == [1.0, 1.0]


def test_map_location(tmp_path, device):
    path = tmp_path / "dev.pt"
    ak.save({"w": ak.ones(2, device=device, requires_grad=True),
             "p": nn.Parameter(ak.zeros(1, device=device))}, path)
    back = ak.load(path)
    assert back["w"].device.type == device and back["w"].requires_grad
    for where in ("cpu", ak.device("cpu"), {str(back["w"].device): "cpu"},
                  lambda storage, location: storage):
        moved = ak.load(path, map_location=where)
        assert moved["w"].device == ak.device("cpu") and moved["w"].requires_grad
        assert type(moved["p"]) is nn.Parameter and moved["w"].tolist() == [1.0, 1.0]
    there = ak.load(path, map_location=device, weights_only=False)
    assert there["w"].device.type == device and type(there["p"]) is nn.Parameter
    on_gpu = ak.load(path, map_location=lambda storage, location: storage.to("cuda"))
    assert on_gpu["w"].device.type == "cuda" and on_gpu["w"].is_leaf and on_gpu["w"].requires_grad


def test_a_device_that_is_not_here(tmp_path, monkeypatch):
    from autograd_kit import backend
    path = tmp_path / "gpu.pt"
    ak.save({"w": ak.ones(2)}, path)
    monkeypatch.setattr(backend, "cuda_is_available", lambda: False)
    with pytest.raises(RuntimeError) as info:
        ak.load(path, map_location="cuda")
    assert "map_location='cpu'" in str(info.value)
    with pytest.raises(RuntimeError) as info:
        ak.load(path, map_location="mps")
    assert "'mps'" in str(info.value)


# ----------------------------------------------------- opting out, admitting --
def test_weights_only_false_loads_a_whole_model_without_a_warning(tmp_path):
    model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    path = tmp_path / "model.pt"
    ak.save(model, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        twin = ak.load(path, weights_only=False)
    x = ak.randn(4, 2)
    assert type(twin) is nn.Sequential and twin(x).tolist() == model(x).tolist()
    torch = torch_or_none()
    if torch is not None:  # PyTorch says nothing either when asked explicitly
        buffer = io.BytesIO()
        torch.save(torch.nn.Linear(2, 2), buffer)
        buffer.seek(0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            torch.load(buffer, weights_only=False)


def test_a_pickle_module_of_ones_own(tmp_path):
    path = tmp_path / "m.pt"
    ak.save(nn.Linear(2, 2), path)
    with pytest.raises(RuntimeError, match="pickle_module"):
        ak.load(path, pickle_module=pickle, weights_only=True)
    assert type(ak.load(path, pickle_module=pickle)) is nn.Linear  # as PyTorch: not weights-only
    torch = torch_or_none()
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.load(path, pickle_module=pickle, weights_only=True)


def test_add_safe_globals_admits_a_class_of_ones_own(tmp_path):
    path = tmp_path / "config.pt"
    ak.save({"config": Config("mlp", ak.ones(2, requires_grad=True))}, path)
    with pytest.raises(pickle.UnpicklingError) as info:
        ak.load(path)
    assert f"GLOBAL {__name__}.Config" in str(info.value)
    add_safe_globals([Config])
    assert get_safe_globals() == [Config]
    config = ak.load(path)["config"]
    assert type(config) is Config and config.name == "mlp"
    assert type(config.weight) is ak.Tensor and config.weight.requires_grad
    clear_safe_globals()
    assert get_safe_globals() == []
    add_safe_globals([(Config, f"{__name__}.Config")])
    assert type(ak.load(path)["config"]) is Config
    with pytest.raises(ValueError):
        add_safe_globals([(Config, "a", "b")])
    with pytest.raises(TypeError):
        add_safe_globals([(Config, 3)])


def test_safe_globals_context_restores_the_list(tmp_path):
    path = tmp_path / "config.pt"
    ak.save(Config("x", ak.zeros(1)), path)
    add_safe_globals([nn.Linear])
    with safe_globals([Config, nn.Linear]):
        assert type(ak.load(path)) is Config
        assert set(get_safe_globals()) == {Config, nn.Linear}
    assert get_safe_globals() == [nn.Linear]
    with pytest.raises(pickle.UnpicklingError):
        ak.load(path)


def test_admitting_model_classes_loads_a_whole_model(tmp_path):
    model = nn.Linear(2, 3)
    path = tmp_path / "linear.pt"
    ak.save(model, path)
    with safe_globals([nn.Linear]):
        twin = ak.load(path)
    assert type(twin) is nn.Linear and type(twin.weight) is nn.Parameter
    x = ak.randn(2, 2)
    assert twin(x).tolist() == model(x).tolist()


def test_reachable_as_pytorch_spells_it():
    import autograd_kit as torch
    for name in ("add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"):
        assert callable(getattr(torch.serialization, name))
    assert torch.load is torch.serialization.load and torch.save is torch.serialization.save


def test_old_files_of_the_kit_still_load(tmp_path):
    # written the way ``save`` always wrote: a pickle of the kit's objects
    sd = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).state_dict()
    path = write(tmp_path / "old.pt", sd)
    data = path.read_bytes()
    names = {arg for op, arg, _ in pickletools.genops(data) if op.name == "GLOBAL"}
    assert "autograd_kit.nn.parameter _rebuild_parameter" not in names  # detached tensors
    back = ak.load(path)
    assert all(back[k].equal(v) for k, v in sd.items())


# --------------------------------------------------------- PyTorch's files --
def test_a_state_dict_saved_by_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    path = tmp_path / "torch_model.pt"
    torch.save(theirs.state_dict(), path)
    ours = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    loaded = ak.load(path)
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(theirs.state_dict())
    ours.load_state_dict(loaded)
    x = np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32)
    assert np.allclose(ours(ak.tensor(x.tolist())).tolist(),
                       theirs(torch.tensor(x)).tolist(), atol=1e-6)


def test_tensors_saved_by_pytorch(tmp_path):
    torch = pytest.importorskip("torch")
    a = torch.arange(12.0).reshape(3, 4)
    x = torch.ones(2, requires_grad=True)
    obj = {"t": a.t(), "slice": a[1:, 2:], "row": a[1], "scalar": torch.tensor(3.5),
           "empty": torch.empty(0, 3), "bool": torch.tensor([True, False]),
           "long": torch.arange(3), "half": torch.ones(2, dtype=torch.float16),
           "complex": torch.tensor([1 + 2j], dtype=torch.complex64),
           "int8": torch.tensor([-3, 4], dtype=torch.int8), "leaf": x, "nonleaf": x * 2,
           "param": torch.nn.Parameter(torch.ones(2)), "list": [a, (a[0],)]}
    extra = {"dtype": torch.float64, "device": torch.device("cuda", 1),
             "size": torch.Size([2, 3])}
    path = tmp_path / "tensors.pt"
    torch.save({**obj, **extra}, path)
    back = ak.load(path)
    for name, t in obj.items():
        if isinstance(t, torch.Tensor):
            got = back[name]
            assert got.tolist() == t.tolist() and str(got.dtype) == str(t.dtype), name
            assert (got.requires_grad, got.is_leaf) == (t.requires_grad, True), name
            assert got.shape == tuple(t.shape)
    assert back["t"].is_contiguous() == obj["t"].is_contiguous()
    assert type(back["param"]) is nn.Parameter and back["param"].requires_grad
    assert back["list"][0].tolist() == a.tolist() and back["list"][1][0].tolist() == [0, 1, 2, 3]
    assert back["dtype"] is ak.float64 and back["device"] == ak.device("cuda", 1)
    assert type(back["size"]) is ak.Size and back["size"] == (2, 3)
    buffer = io.BytesIO(path.read_bytes())
    assert ak.load(buffer, map_location="cpu")["leaf"].requires_grad


def test_what_the_kit_cannot_take_from_pytorch(tmp_path, marker):
    torch = pytest.importorskip("torch")
    path = tmp_path / "bf16.pt"
    torch.save({"w": torch.ones(2, dtype=torch.bfloat16)}, path)
    with pytest.raises(RuntimeError) as info:
        ak.load(path)
    assert_says(info.value, "bf16.pt", "torch.bfloat16")
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    assert_refused(lambda: ak.load(path), path, marker, "torch.nn.modules.linear.Linear")
    with pytest.raises(RuntimeError) as info:
        ak.load(path, weights_only=False)
    assert_says(info.value, "torch.nn.modules.linear.Linear")
    path = tmp_path / "script.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.jit is deprecated in favour of torch.export)
        torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(path))
    with pytest.raises(RuntimeError) as info:
        ak.load(path)
    assert_says(info.value, "TorchScript")
    same_class_as_torch(path, RuntimeError)
    path = tmp_path / "old.pt"
    torch.save({"w": torch.ones(2)}, path, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError) as info:
        ak.load(path)
    assert_says(info.value, "old format")


def test_a_length_larger_than_memory_is_a_damaged_file(tmp_path):
    """BINBYTES8 with a length of 2**63 - 1: pickle would try to allocate it all."""
    path = tmp_path / "huge.pt"
    path.write_bytes(b"\x80\x04\x8e" + (2**63 - 1).to_bytes(8, "little") + b"xx")
    with pytest.raises(pickle.UnpicklingError, match="damaged") as info:
        ak.load(path)
    assert "MemoryError" not in str(info.value)
