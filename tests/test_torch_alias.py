"""The learner's own notebook: PyTorch code that says ``import torch``.

* :func:`autograd_kit.alias_torch` makes ``import torch``, ``from torch import
  nn``, ``import torch.nn.functional as F``... give the kit: an unchanged
  tutorial snippet runs on the kit, in a fresh process with PyTorch installed
  and with PyTorch hidden; undoing it leaves ``sys.modules`` as it was (a
  PyTorch imported before: the very same module objects).
* ``%autograd_alias torch`` / ``off`` does it in a notebook.
* The explainer recognises a tensor of one library given to the other, and a
  graph that ``%autograd_step`` already ran backward through.
* A leaf changed in place shows a traceback that ends at the learner's line.
"""
import importlib
import json
import subprocess
import sys
import textwrap

import pytest
from IPython.core.error import UsageError

import autograd_kit as ak
from autograd_kit import alias
from autograd_kit.ipython import culprits, explain, steppers
from shell_support import ANSI, close_shell, flat, make_shell, run

SNIPPET = '''
import torch
from torch import nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Function
from torch.utils.data import DataLoader, TensorDataset


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * grad


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(Cube.apply(x))))


torch.manual_seed(0)
net = Net()
optimizer = optim.SGD(net.parameters(), lr=0.01)
data = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
for inputs, targets in DataLoader(data, batch_size=8, shuffle=True):
    optimizer.zero_grad()
    loss = F.mse_loss(net(inputs), targets)
    loss.backward()
    optimizer.step()
'''

SCRIPT = '''
import json, sys

HIDE = {hide}


class NoTorch:  # as if PyTorch were not installed
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)


if HIDE:
    sys.meta_path.insert(0, NoTorch())
else:
    import torch, torch.nn, torch.optim  # PyTorch imported first, as in a notebook


def torch_modules():
    return {{k: v for k, v in sys.modules.items() if k.startswith("torch")}}


import autograd_kit
before = torch_modules()
namespace = {{}}
with autograd_kit.alias_torch():
    exec({snippet!r}, namespace)
after = torch_modules()
try:
    import torch
    real = torch.__name__
except ImportError:
    real = None
print(json.dumps({{
    "loss": type(namespace["loss"]).__module__,
    "linear": type(namespace["net"].fc1).__module__,
    "grad": type(namespace["net"].fc1.weight.grad).__module__,
    "same_keys": sorted(before) == sorted(after),
    "same_objects": all(after[k] is v for k, v in before.items()),
    "count": len(before),
    "real": real,
}}))
'''


def run_snippet(hide: bool) -> dict:
    code = SCRIPT.format(hide=hide, snippet=textwrap.dedent(SNIPPET))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def alias_off_afterwards():
    yield
    ak.unalias_torch()


# -- alias_torch -------------------------------------------------------------------------
def test_a_tutorial_snippet_runs_on_the_kit_with_torch_hidden():
    out = run_snippet(hide=True)
    assert out["loss"] == "autograd_kit.tensor" and out["grad"] == "autograd_kit.tensor"
    assert out["linear"] == "autograd_kit.nn.layers"
    assert out["count"] == 0 and out["same_keys"] and out["real"] is None


def test_a_tutorial_snippet_runs_on_the_kit_with_torch_imported_first():
    pytest.importorskip("torch")
    out = run_snippet(hide=False)
    assert out["loss"] == "autograd_kit.tensor" and out["grad"] == "autograd_kit.tensor"
    assert out["linear"] == "autograd_kit.nn.layers"
    assert out["count"] > 10 and out["same_keys"] and out["same_objects"]
    assert out["real"] == "torch"  # PyTorch again after the block


def torch_modules() -> dict:
    return {k: v for k, v in sys.modules.items() if k.startswith("torch")}


def test_undo_puts_back_the_very_same_modules():
    pytest.importorskip("torch")
    importlib.import_module("torch.nn.functional")
    before = torch_modules()
    handle = ak.alias_torch()
    import torch
    import torch.nn.functional as F
    import torch.optim as optim
    from torch import nn
    from torch.autograd import Function
    from torch.utils.data import DataLoader
    assert torch is ak and nn is ak.nn and F is ak.nn.functional and optim is ak.optim
    assert Function is ak.autograd.Function and DataLoader is ak.utils.data.DataLoader
    handle.undo()
    after = torch_modules()
    assert after.keys() == before.keys()
    assert all(after[k] is before[k] for k in before)
    import torch
    assert torch is before["torch"] and torch is not ak


def test_undo_leaves_no_torch_entry_behind(monkeypatch):
    for name in list(torch_modules()):  # as if PyTorch had never been imported
        monkeypatch.delitem(sys.modules, name)
    with ak.alias_torch() as handle:
        assert handle.active and ak.torch_aliased()
        importlib.import_module("torch.nn.init")
        assert importlib.import_module("torch.autograd.functional") is \
            ak.autograd.functional
        assert sys.modules["torch.nn.init"] is ak.nn.init
    assert torch_modules() == {} and not ak.torch_aliased() and not handle.active
    assert alias._FINDER not in sys.meta_path


def test_a_module_the_kit_lacks_is_refused_not_loaded_twice():
    with ak.alias_torch():
        with pytest.raises(ModuleNotFoundError, match="torch.nn.modules"):
            importlib.import_module("torch.nn.modules")
        with pytest.raises(ModuleNotFoundError):  # (the kit's tensor.py, a second time)
            importlib.import_module("torch.tensor")
        assert "torch.tensor" not in sys.modules


def test_the_module_docstring_example_runs():
    import doctest
    assert doctest.testmod(alias).failed == 0


def test_nested_calls_and_a_second_undo_change_nothing():
    before = torch_modules()
    outer = ak.alias_torch()
    with ak.alias_torch() as inner:
        assert not inner.active
    assert ak.torch_aliased() and sys.modules["torch"] is ak  # the inner block left it on
    outer.undo()
    outer.undo()
    ak.unalias_torch()
    assert torch_modules().keys() == before.keys()


# -- %autograd_alias ------------------------------------------------------------------------
@pytest.fixture
def ip():
    shell = make_shell()
    yield shell
    ak.unalias_torch()
    close_shell(shell, ("torch", "nn", "F", "real", "x", "y", "t", "model", "loss", "w", "out"))


def test_the_magic_turns_the_alias_on_and_off(ip):
    before = torch_modules()
    assert run(ip, "%autograd_alias")[1].strip() == "autograd_alias is off"
    result, text, _ = run(ip, "%autograd_alias torch")
    assert result.success and "`import torch` now gives autograd_kit" in text
    assert run(ip, "%autograd_alias")[1].strip() == "autograd_alias is on"
    run(ip, "import torch\nfrom torch import nn\nimport torch.nn.functional as F")
    assert ip.user_ns["torch"] is ak and ip.user_ns["nn"] is ak.nn
    assert ip.user_ns["F"] is ak.nn.functional
    result, text, _ = run(ip, "%autograd_alias off")
    assert result.success and "still refer to autograd_kit" in text
    assert torch_modules().keys() == before.keys()
    assert all(sys.modules[k] is v for k, v in before.items())


def test_the_magic_names_the_imports_to_run_again(ip):
    pytest.importorskip("torch")
    run(ip, "import torch\nfrom torch import nn\nimport autograd_kit as ak_")
    result, text, _ = run(ip, "%autograd_alias torch --lang en")
    assert "Run your imports again: `torch`, `nn` still refer to PyTorch." in text
    ip.user_ns.pop("ak_", None)


def test_the_magic_speaks_the_learners_language(ip):
    assert run(ip, "%autograd_alias --lang ru")[1].strip() == "autograd_alias выключено"
    text = run(ip, "%autograd_alias torch --lang zh")[1]
    assert "现在 `import torch` 得到的是 autograd_kit" in text


def test_the_magic_refuses_a_bad_word_in_one_line(ip):
    result, _, _ = run(ip, "%autograd_alias numpy")
    assert isinstance(result.error_in_exec, UsageError) and not ak.torch_aliased()


# -- the explainer: a tensor of one library given to the other ---------------------------
@pytest.fixture
def explaining(ip):
    ip.run_line_magic("autograd_explain", "on")
    yield ip
    ip.run_line_magic("autograd_explain", "off")


def explained(outputs) -> str:
    shown, = outputs
    return flat(shown.data["text/plain"])


def test_a_kit_tensor_given_to_pytorch_is_explained(explaining):
    pytest.importorskip("torch")
    run(explaining, "import autograd_kit as torch\nfrom torch import nn\n"
                    "x = torch.ones(2, 3)")
    result, text, outputs = run(explaining, "nn.Linear(3, 2)(x)")
    assert "must be Tensor, not Tensor" in text
    said = explained(outputs)
    assert "`x` is a tensor of autograd_kit, given to the real PyTorch" in said
    assert "`autograd_kit.alias_torch()` (or `%autograd_alias torch`)" in said


def test_a_pytorch_tensor_given_to_the_kit_is_explained(explaining):
    pytest.importorskip("torch")
    run(explaining, "import torch as real\nimport autograd_kit as torch\n"
                    "t = real.ones(2, 3)\nx = torch.ones(2, 3)\nmodel = torch.nn.Linear(3, 2)")
    for line in ("model(t)", "torch.mm(x, t.t())"):
        said = explained(run(explaining, line)[2])
        assert "`t` is a tensor of the real PyTorch, given to autograd_kit" in said, line
        assert "%autograd_alias torch" in said
    said = explained(run(explaining, "x + t")[2])
    assert said.startswith("autograd_kit explains") and "met in one operation" in said


def test_other_type_errors_are_not_taken_for_mixed_tensors():
    def fails():
        ak.ones(2) + "a"  # noqa: B018
    with pytest.raises(TypeError) as info:
        fails()
    assert culprits.mixed_engines(info.value) is None
    assert culprits.mixed_engines(AttributeError("'Tensor' object has no attribute '_x'")) \
        is None  # no PyTorch tensor in sight


# -- the explainer: the stepper ran backward ------------------------------------------------
def test_a_graph_the_stepper_used_up_is_blamed_on_the_stepper(explaining):
    pytest.importorskip("torch")
    pytest.importorskip("ipywidgets")
    run(explaining, "import torch\nw = torch.ones(3, requires_grad=True)\n"
                    "loss = (w * w).sum()")
    result, _, _ = run(explaining, "%autograd_step loss")
    assert result.success
    result, _, outputs = run(explaining, "loss.backward()")
    said = explained(outputs)
    assert "`%autograd_step loss` had already run backward through it" in said
    assert "The stepper (the `%autograd_step` magic) runs the real backward pass" in said
    assert "%autograd_step loss --retain-graph" in said


def test_a_kit_graph_is_blamed_on_the_stepper_once_stepped_to_the_end(explaining):
    pytest.importorskip("ipywidgets")
    run(explaining, "import autograd_kit as torch\nw = torch.ones(3, requires_grad=True)\n"
                    "loss = (w * w).sum()")
    run(explaining, "%autograd_step loss")
    stepper = steppers._STEPPED[-1][2]()
    assert steppers.stepped([explaining.user_ns["loss"]]) is None  # not run yet
    stepper.run()
    said = explained(run(explaining, "loss.backward()")[2])
    assert "`%autograd_step loss` had already run backward through it" in said


def test_a_second_backward_of_ones_own_still_blames_the_first_backward(explaining):
    run(explaining, "import autograd_kit as torch\nw = torch.ones(3, requires_grad=True)\n"
                    "out = (w * w).sum()")
    said = explained(run(explaining, "out.backward()\nout.backward()")[2])
    assert "the first backward() frees" in said and "%autograd_step" not in said


# -- short tracebacks -------------------------------------------------------------------------
def change_a_leaf(lib):
    x = lib.ones(3, requires_grad=True)
    x.add_(1)  # FAILS


def test_a_leaf_changed_in_place_shows_the_learners_line_last():
    with pytest.raises(RuntimeError) as info:
        change_a_leaf(ak)
    entries, tb = [], explain.user_traceback(info.value)
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    names = [e.tb_frame.f_code.co_name for e in entries]
    assert names == ["test_a_leaf_changed_in_place_shows_the_learners_line_last",
                     "change_a_leaf"]  # no frame of the kit's, as PyTorch shows none
    assert str(info.value).startswith("a leaf Variable that requires grad")


def shown_lines(shell, library: str, line: str) -> list[str]:
    """The lines a notebook shows for ``line`` failing on a leaf of ``library``."""
    run(shell, f"import {library} as torch\nx = torch.ones(3, requires_grad=True)")
    result, text, _ = run(shell, f"y = 2\n{line}")
    assert "in-place operation" in text, text
    return ANSI.sub("", text).strip().splitlines()


@pytest.mark.parametrize("line", ["x.add_(1)", "x += 1", "x[0] = 5"])
def test_the_notebook_traceback_is_as_long_as_pytorchs(ip, line):
    ours = shown_lines(ip, "autograd_kit", line)
    assert isinstance(ip.user_ns["x"], ak.Tensor)
    assert not any("autograd_kit" in s and "File " in s for s in ours), ours
    assert ours[-1].startswith("LeafInplaceError: a ") and ours[-1].endswith("operation.")
    try:
        import torch  # noqa: F401
    except ImportError:
        theirs = 7  # (what PyTorch 2 shows: the header, the cell's two lines, the error)
    else:
        theirs = len(shown_lines(ip, "torch", line))
    assert len(ours) == theirs, ours


def test_the_notebook_traceback_of_a_plain_error_ends_at_the_learners_line(ip):
    run(ip, "import autograd_kit as torch\nx = torch.ones(3)")
    result, text, _ = run(ip, "x.add_(torch.ones(2, 3))")
    assert "doesn't match the broadcast shape" in text and "errors.short" not in text
