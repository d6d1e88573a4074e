"""The GPU path beyond the engine: printing, pictures, widgets, gradcheck,
saving, and Appendix B with a GPU present.

Every test here runs on "cuda": cupy on a real GPU, otherwise the strict
stand-in device (see ``conftest.py``), which refuses any copy to the host the
kit did not ask the backend for.  Each test compares with the same code on the
CPU, so a value that went wrong on the way is seen too.
"""
import contextlib
import copy
import io
import json
import pathlib
import pickle

import numpy as np
import pytest

import autograd_kit as ak
from autograd_kit import backend, nn
from autograd_kit.widgets import BackwardStepper

pytestmark = pytest.mark.gpu
LESSONS = pathlib.Path(__file__).resolve().parent.parent / "lessons"
ON_CUDA = ", device='cuda:0'"


def graph(dev, seed=3):
    """A small graph with a shared input, a view, a reduction and a matmul."""
    rng = np.random.default_rng(seed)
    x = ak.tensor(rng.normal(size=(2, 3)).tolist(), requires_grad=True, device=dev)
    w = ak.tensor(rng.normal(size=(3, 2)).tolist(), requires_grad=True, device=dev)
    b = ak.tensor([0.5, -1.0], requires_grad=True, device=dev)
    h = (x @ w + b).tanh()
    loss = (h * h).sum() + x[0].exp().mean() + (h.max() * 2).relu()
    return {"x": x, "w": w, "b": b, "h": h, "loss": loss}


def test_tensors_print_as_on_the_cpu_with_the_device_named():
    for make in (lambda d: ak.tensor([1.5, -2.0, 3.25], device=d),
                 lambda d: ak.arange(12., device=d).reshape(3, 4) / 7,
                 lambda d: ak.zeros(2000, device=d) + 1,
                 lambda d: ak.tensor(2.5, device=d, requires_grad=True) * 2,
                 lambda d: ak.tensor([[True, False]], device=d)):
        cpu, gpu = make("cpu"), make("cuda")
        assert repr(gpu).replace(ON_CUDA, "") == repr(cpu)
        assert ON_CUDA in repr(gpu)
        assert str(gpu).replace(ON_CUDA, "") == str(cpu)
        assert gpu.tolist() == cpu.tolist()
    s = ak.tensor(0.125, device="cuda")
    assert f"{s:.2f}" == "0.12" and float(s) == 0.125 and s.item() == 0.125
    assert isinstance(s.item(), float) and bool(s) and int(ak.tensor(7, device="cuda")) == 7


def test_numpy_needs_an_explicit_copy_to_the_host():
    t = ak.tensor([1., 2.], device="cuda")
    message = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
               "the tensor to host memory first.")
    for implicit in (t.numpy, lambda: np.asarray(t)):
        with pytest.raises(TypeError) as info:
            implicit()
        assert str(info.value) == message
    assert t.cpu().numpy().tolist() == [1., 2.]
    assert t.numpy(force=True).tolist() == [1., 2.]
    assert type(t.numpy(force=True)) is np.ndarray


def test_saving_and_copying_keep_the_device_and_values():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to("cuda")
    again = pickle.loads(pickle.dumps(model.state_dict()))
    twin = copy.deepcopy(model)
    for name, p in model.state_dict().items():
        assert p.device == ak.device("cuda:0")
        assert again[name].tolist() == p.tolist()
        assert twin.state_dict()[name].device == p.device
    t = ak.tensor([1., 2.], device="cuda", requires_grad=True)
    back = pickle.loads(pickle.dumps(t))
    assert back.device == t.device and back.requires_grad and back.tolist() == [1., 2.]


def test_pictures_of_a_gpu_graph_are_those_of_the_cpu_graph():
    pictures = {}
    for dev in ("cpu", "cuda"):
        g = graph(dev)
        g["h"].retain_grad()
        g["loss"].backward(retain_graph=True)
        pictures[dev] = [ak.make_dot(g["loss"], names=g, show_values=True, show_grads=True,
                                     show_saved=True, show_attrs=True).source,
                         ak.make_dot(g["loss"], names=g, view="forward",
                                     show_values=True).source]
    assert pictures["cuda"] == pictures["cpu"]
    assert "grad [" in pictures["cpu"][0]  # the values were drawn, not just the shapes


def test_the_stepper_shows_the_same_steps_on_the_gpu():
    seen = {}
    for dev in ("cpu", "cuda"):
        g = graph(dev)
        stepper = BackwardStepper(g["loss"], names=g)
        pages = []
        while not stepper.finished:
            stepper.step()
            pages.append([stepper.status.value, stepper.panel.value, stepper.picture.value])
        stepper.back()
        pages.append(stepper.still_html())
        seen[dev] = pages
    assert json.dumps(seen["cuda"]).replace(ON_CUDA, "") == json.dumps(seen["cpu"])


@pytest.mark.filterwarnings("ignore")  # anomaly mode warns by design; numpy of 0 / 0
def test_gradcheck_and_anomaly_mode_on_the_gpu():
    x = ak.tensor([0.3, -1.2, 2.0], dtype=ak.float64, requires_grad=True, device="cuda")
    assert ak.autograd.gradcheck(lambda a: (a.sin() * a).sum(), (x,))
    y = ak.tensor([0.0, 1.0], requires_grad=True, device="cuda")
    with ak.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="returned nan values"):
            (y / y).sum().backward()


def _lesson_cells(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [c for c in cells if c["cell_type"] == "code"]


def test_lesson_12_takes_its_gpu_branches_on_this_device(monkeypatch):
    """Appendix B run top to bottom in this process, where a GPU (or its stand-in)
    is present: every ``if ak.cuda.is_available()`` branch runs, and says what the
    lesson promises.  (nbval runs the same notebook on the CPU-only path.)"""
    monkeypatch.chdir(LESSONS)
    out, namespace = io.StringIO(), {}
    for cell in _lesson_cells(LESSONS / "B_gpu_with_cupy.ipynb"):
        source = "".join(cell["source"])
        # the timing table: the small size is enough to run the code on both devices
        source = source.replace("for n in (64, 1024):", "for n in (64,):")
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(source, "appendix B", "exec"), namespace)  # noqa: S102
            except RuntimeError:
                if "raises-exception" not in cell.get("metadata", {}).get("tags", []):
                    raise
    text = out.getvalue()
    assert "No GPU here" not in text
    for promise in ("GPU available: True", "created: tensor([1., 2., 3.], device='cuda:0')",
                    "b.grad = tensor([2., 4., 6.]) on cpu",
                    "TypeError: can't convert cuda:0 device type tensor to numpy",
                    "RuntimeError: Expected all tensors to be on the same device",
                    "tensor([2., 2., 2.], device='cuda:0')",
                    "weights agree with the CPU run: True", "on cuda"):
        assert promise in text, promise
    assert namespace["gpu_losses"] == pytest.approx(namespace["cpu_losses"], rel=1e-4, abs=1e-6)


def test_the_cuda_device_is_what_the_backend_serves():
    t = ak.ones(3, device="cuda")
    assert t.is_cuda and t.device == ak.device("cuda", 0)
    assert type(t._data) is backend._cupy.ndarray
    assert backend.xp_of(t._data) is backend._cupy
    assert t.cpu()._data.__class__ is np.ndarray


def test_the_exercise_checker_runs_a_custom_backward_on_the_gpu():
    """``backward_problem`` calls a learner's backward with a gradient of ones: on
    the inputs' device, or a right answer would be reported as a device error."""
    from autograd_kit.autograd import Function
    from autograd_kit.exercises import backward_problem

    class MyExp(Function):
        @staticmethod
        def forward(ctx, x):
            result = x.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, g):
            (result,) = ctx.saved_tensors
            return g * result

    x = ak.tensor([-1.0, 0.5, 2.0], dtype=ak.float64, requires_grad=True, device="cuda")
    assert backward_problem(MyExp, (x,)) is None
