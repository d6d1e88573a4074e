"""Display hooks of ``%load_ext autograd_kit``: grad_fn pictures and tensor cards."""
import re
import warnings

import pytest

from autograd_kit.graph import Node
from autograd_kit.tensor import Tensor
from autograd_kit.viz import render
from shell_support import close_shell, make_shell, needs_renderer


ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


@pytest.fixture
def ip():
    shell = make_shell("import autograd_kit as torch\n"
                       "leaf = torch.tensor([1., 2.], requires_grad=True)\n"
                       "scale = torch.tensor([3., 4.], requires_grad=True)\n"
                       "prod = leaf * scale\nout = prod.sum()")
    yield shell
    close_shell(shell, ("leaf", "scale", "prod", "out", "<script>"))


def fmt(shell, obj) -> dict:
    data, _ = shell.display_formatter.format(obj)
    return data


# -- grad_fn nodes ---------------------------------------------------------------------------
def test_node_text_is_short_and_has_no_address(ip):
    data = fmt(ip, ip.user_ns["out"].grad_fn)
    assert data["text/plain"] == "<SumBackward0>"
    acc = ip.user_ns["out"].grad_fn.next_functions[0][0].next_functions[0][0]
    assert fmt(ip, acc)["text/plain"] == "<AccumulateGrad>"
    assert not ADDRESS.search(fmt(ip, ip.user_ns["prod"].grad_fn)["text/plain"])


@needs_renderer
def test_node_shows_the_picture_of_the_graph_below_it(ip):
    svg = fmt(ip, ip.user_ns["prod"].grad_fn)["image/svg+xml"]
    assert svg.lstrip().startswith("<svg")
    assert "MulBackward0" in svg and "leaf" in svg and "scale" in svg
    assert "SumBackward0" not in svg  # only what lies below the node
    assert svg == fmt(ip, ip.user_ns["prod"].grad_fn)["image/svg+xml"]  # same every time


@needs_renderer
def test_node_picture_shows_in_an_untrusted_notebook_as_an_image(ip):
    """Untrusted JupyterLab skips image/svg+xml and strips inline <svg> from HTML;
    an <img> whose source is the SVG shows."""
    import base64
    data = fmt(ip, ip.user_ns["prod"].grad_fn)
    html = data["text/html"]
    assert "<svg" not in html and html.startswith('<img src="data:image/svg+xml;base64,')
    payload = re.search(r"base64,([A-Za-z0-9+/=]+)", html).group(1)
    assert base64.b64decode(payload).decode("utf-8") == data["image/svg+xml"]
    assert 'alt="Computational graph' in html


def test_node_picture_failure_leaves_the_text(ip, monkeypatch):
    def broken(source):
        raise render.RenderError("nothing can draw")
    monkeypatch.setattr(render, "render_svg", broken)
    data = fmt(ip, ip.user_ns["prod"].grad_fn)
    assert data == {"text/plain": "<MulBackward0>"}


def test_unload_removes_the_node_formatters_and_restores_earlier_ones(ip):
    plain = ip.display_formatter.formatters["text/plain"]
    ip.run_line_magic("unload_ext", "autograd_kit")
    assert Node not in plain.type_printers
    assert Node not in ip.display_formatter.formatters["image/svg+xml"].type_printers
    assert Node not in ip.display_formatter.mimebundle_formatter.type_printers
    assert "object at 0x" in fmt(ip, ip.user_ns["out"].grad_fn)["text/plain"]

    def mine(obj, p, cycle):
        p.text("mine")
    plain.for_type(Node, mine)
    ip.run_line_magic("load_ext", "autograd_kit")
    assert fmt(ip, ip.user_ns["out"].grad_fn)["text/plain"] == "<SumBackward0>"
    ip.run_line_magic("unload_ext", "autograd_kit")
    assert fmt(ip, ip.user_ns["out"].grad_fn)["text/plain"] == "mine"
    plain.pop(Node)
    ip.run_line_magic("load_ext", "autograd_kit")


# -- tensors ------------------------------------------------------------------------------------
def test_tensor_keeps_pytorchs_text_and_no_card_by_default(ip):
    leaf = ip.user_ns["leaf"]
    data = fmt(ip, leaf)
    assert data == {"text/plain": "tensor([1., 2.], requires_grad=True)"}


def test_card_mode_adds_html_and_keeps_the_text(ip):
    ip.run_line_magic("autograd_display", "card")
    data = fmt(ip, ip.user_ns["prod"])
    assert data["text/plain"] == "tensor([3., 8.], grad_fn=<MulBackward0>)"
    html = data["text/html"]
    assert "<b>prod</b>" in html
    for word in ("torch.Size([2])", "torch.float32", "is_leaf", "requires_grad",
                 "&lt;MulBackward0&gt;", "tensor([3., 8.])", "not a leaf"):
        assert word in html
    ip.run_line_magic("autograd_display", "text")
    assert "text/html" not in fmt(ip, ip.user_ns["prod"])


def test_card_shows_the_grad_without_warnings(ip):
    ip.run_line_magic("autograd_display", "card")
    ip.run_cell("out.backward()")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        leaf_html = fmt(ip, ip.user_ns["leaf"])["text/html"]
        prod_html = fmt(ip, ip.user_ns["prod"])["text/html"]
    assert "tensor([3., 4.])" in leaf_html  # d out / d leaf = scale
    assert "retain_grad" in prod_html


def test_card_escapes_names_and_values(ip):
    ip.run_line_magic("autograd_display", "card")
    t = ip.user_ns["<script>"] = Tensor([5.0])
    html = fmt(ip, t)["text/html"]
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "<b>" in html  # the card's own markup is still there


def test_card_text_is_deterministic(ip):
    ip.run_line_magic("autograd_display", "card")
    first = fmt(ip, ip.user_ns["prod"])
    assert first == fmt(ip, ip.user_ns["prod"])
    assert not ADDRESS.search(first["text/plain"] + first["text/html"])


def test_unload_removes_the_card(ip):
    ip.run_line_magic("autograd_display", "card")
    ip.run_line_magic("unload_ext", "autograd_kit")
    assert Tensor not in ip.display_formatter.formatters["text/html"].type_printers
    ip.run_line_magic("load_ext", "autograd_kit")
    assert "text/html" not in fmt(ip, ip.user_ns["leaf"])  # back to the default mode


@pytest.mark.parametrize("obj, kind", [(3, "an int"), ([1.0], "a list"),
                                       (Tensor, "the class Tensor")])
def test_card_of_something_else_is_a_one_line_type_error(obj, kind):
    from autograd_kit.ipython import display
    for make in (display.tensor_card, display.card_rows):
        with pytest.raises(TypeError) as info:
            make(obj)
        message = str(info.value)
        assert "\n" not in message and kind in message
        assert message.startswith("the tensor card takes a tensor of autograd_kit or PyTorch")
