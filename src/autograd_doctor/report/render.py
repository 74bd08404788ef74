"""DOT text to SVG, PNG or PDF: the system's Graphviz `dot` when installed, else the pygraphviz wheel.

`pip install autograd-doctor[picture]` brings pygraphviz, whose wheels carry Graphviz
itself, so a machine with only pip still gets a picture. The system `dot` is preferred
when present (it is the user's own install, with their fonts). Either way the drawing
runs in a child process: a crash inside Graphviz's C code cannot take the user's
program (or its exception) down with it.

`AUTOGRAD_DOCTOR_GRAPHVIZ` chooses: `auto` (the default), `dot`, `pygraphviz` or `none`.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

DOT_TIMEOUT_S = 30
RENDERER_ENV = "AUTOGRAD_DOCTOR_GRAPHVIZ"
RENDERER_CHOICES = ("auto", "dot", "pygraphviz", "none")
INSTALL_HINT = "`apt-get install graphviz`, or `pip install pygraphviz`"

# Run in a child interpreter. The working directory is dropped from sys.path first, so
# that a user's file named like a module (pygraphviz.py, html.py) cannot shadow it.
_PYGRAPHVIZ_CHILD = (
    "import sys\n"
    "del sys.path[0]\n"
    "import pygraphviz\n"
    "graph = pygraphviz.AGraph(string=sys.stdin.buffer.read().decode('utf-8'))\n"
    "sys.stdout.buffer.write(graph.draw(format=sys.argv[1], prog='dot'))\n"
)


class GraphvizMissing(RuntimeError):
    """Raised when SVG is asked for and neither Graphviz's `dot` nor pygraphviz is installed."""


class RenderFailed(RuntimeError):
    """Raised when Graphviz is there but could not draw (it failed, crashed or timed out)."""


def dot_executable() -> str | None:
    """Path of the system's Graphviz `dot`, or None when it is not on PATH.

    Example::

        >>> dot_executable() is None or dot_executable().endswith("dot")
        True
    """
    return shutil.which("dot")


def pygraphviz_installed() -> bool:
    """Whether the pygraphviz package (Graphviz inside a wheel) can be imported.

    Example::

        >>> pygraphviz_installed() in (True, False)
        True
    """
    return importlib.util.find_spec("pygraphviz") is not None


def renderer_choice() -> str:
    """The renderer asked for by AUTOGRAD_DOCTOR_GRAPHVIZ (`auto` when unset).

    Example::

        >>> renderer_choice() in RENDERER_CHOICES
        True
    """
    choice = os.environ.get(RENDERER_ENV, "").strip().lower() or "auto"
    if choice not in RENDERER_CHOICES:
        raise GraphvizMissing(f"{RENDERER_ENV}={choice!r} is not one of {', '.join(RENDERER_CHOICES)}")
    return choice


def renderer() -> tuple[str, list[str]] | None:
    """("dot" or "pygraphviz", the command that reads DOT on stdin), or None when neither is there.

    Example::

        >>> found = renderer()
        >>> found is None or found[0] in ("dot", "pygraphviz")
        True
    """
    choice = renderer_choice()
    if choice in ("auto", "dot"):
        executable = dot_executable()
        if executable is not None:
            return "dot", [executable]
    if choice in ("auto", "pygraphviz") and pygraphviz_installed():
        return "pygraphviz", [sys.executable, "-c", _PYGRAPHVIZ_CHILD]
    return None


def missing_message() -> str:
    """Why no picture can be drawn here, in one sentence with what to install."""
    choice = renderer_choice()
    if choice == "none":
        return f"drawing is turned off ({RENDERER_ENV}=none)"
    if choice == "dot":
        return f"Graphviz `dot` is not installed ({RENDERER_ENV}=dot; `apt-get install graphviz`)"
    if choice == "pygraphviz":
        return f"pygraphviz is not installed ({RENDERER_ENV}=pygraphviz; `pip install pygraphviz`)"
    return f"Graphviz is not installed ({INSTALL_HINT})"


def render_with_dot(dot_text: str, format: str = "svg") -> bytes:
    """Draw DOT text as `format` (svg, png, pdf); GraphvizMissing when nothing can draw, RenderFailed
    when it could not.

    Example::

        >>> svg = render_with_dot("digraph { a -> b }")  # doctest: +SKIP
        >>> svg.startswith(b"<?xml")  # doctest: +SKIP
        True
    """
    found = renderer()
    if found is None:
        raise GraphvizMissing(missing_message())
    name, command = found
    try:
        result = subprocess.run([*command, f"-T{format}"] if name == "dot" else [*command, format],
                                input=dot_text.encode("utf-8"), capture_output=True, timeout=DOT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as problem:
        raise RenderFailed(f"{name} could not run: {problem}") from None
    if result.returncode != 0 or not result.stdout:
        lines = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RenderFailed(f"{name} failed: {lines[-1] if lines else f'exit status {result.returncode}'}")
    return result.stdout


__all__ = [
    "GraphvizMissing", "RenderFailed", "dot_executable", "pygraphviz_installed", "renderer", "renderer_choice",
    "render_with_dot", "missing_message", "RENDERER_ENV",
]
