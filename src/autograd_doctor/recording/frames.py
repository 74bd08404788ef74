"""Cheap capture of the user's source position; formatting happens only when reporting.

A `Site` keeps the code object and the instruction offset of the innermost frame
that belongs to the user (not torch, not autograd_doctor, not the standard
library's machinery). Code objects hold no tensors, so nothing recorded here keeps
user data alive, unlike a frame object, whose locals would.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import itertools
from types import CodeType, FrameType

import torch

from autograd_doctor.recording.own_frames import CALLER_FRAME_NAME, is_our_code

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OUR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB_DIR = sysconfig.get_paths()["stdlib"] + os.sep

# Tools that host user code (test runners, notebooks): the user's stack ends at their frames.
_HOST_PACKAGES = ("pytest", "_pytest", "pluggy", "IPython", "ipykernel", "traitlets", "tornado", "debugpy", "coverage")

# filename -> True when frames from that file are machinery, not user code.
_internal_file_cache: dict[str, bool] = {}


def is_internal_file(filename: str) -> bool:
    """Frames from this file are never the user's line: torch, the doctor, the standard library,
    installed libraries (numpy, torchvision, ...) and the tools that host user code. A failure
    or a write inside a library is reported at the user's line that called into it: the line
    the user can change (a help never edits an installed file)."""
    internal = _internal_file_cache.get(filename)
    if internal is None:
        path = os.path.abspath(filename) if not filename.startswith("<") else filename
        internal = (
            path.startswith(_TORCH_DIR)
            or path.startswith(_OUR_DIR)
            or path.startswith(_STDLIB_DIR)
            or filename.startswith("<frozen ")
            # The `autograd-doctor` console script that pip writes into bin/.
            or os.path.basename(path) == "autograd-doctor"
            or in_installed_package(path)
        )
        _internal_file_cache[filename] = internal
    return internal


# filename -> True when the file belongs to a tool that hosts user code (_HOST_PACKAGES).
_host_file_cache: dict[str, bool] = {}


def is_host_file(filename: str) -> bool:
    """A frame of a tool that runs the user's code (pytest, IPython, ...). The user's
    stack ends there: what called that tool (its console script, `python -m`, a
    notebook cell that ran a cell magic) is not the user's code.

    Example::

        >>> is_host_file("/venv/lib/python3.11/site-packages/_pytest/python.py")
        True
    """
    host = _host_file_cache.get(filename)
    if host is None:
        path = os.path.abspath(filename) if not filename.startswith("<") else filename
        host = _in_host_package(path)
        _host_file_cache[filename] = host
    return host


def _in_host_package(path: str) -> bool:
    parts = path.split(os.sep)
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            index = parts.index(marker)
            return index + 1 < len(parts) and parts[index + 1] in _HOST_PACKAGES
    return False


def in_installed_package(filename: str) -> bool:
    """Installed libraries (site-packages): never the user's line."""
    parts = filename.split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def is_user_frame(frame: FrameType) -> bool:
    return not is_internal_file(frame.f_code.co_filename) and frame.f_code.co_name != CALLER_FRAME_NAME


def called_from_user_code() -> bool:
    """Is the nearest frame above the doctor's own frames (this package's files and the
    stand-ins of `call_as_caller`) the user's, not torch's or a library's? Where in the
    doctor the walk starts does not matter: every frame of ours is passed over."""
    frame = sys._getframe(1)
    while frame is not None and is_our_code(frame.f_code):
        frame = frame.f_back
    return frame is not None and not is_internal_file(frame.f_code.co_filename)


_CO_OPTIMIZED = 0x0001


def frame_locals(frame: FrameType) -> dict:
    """A copy of a frame's local variables that leaves no reference behind.

    Before Python 3.13, reading `frame.f_locals` of a function frame stores a snapshot
    dict on the frame that keeps every local's value alive until the frame ends, even
    after the program rebinds or deletes the variable. Clearing that snapshot is safe
    (the next read rebuilds it); from 3.13 on, f_locals is a live proxy and must not be
    cleared.
    """
    scope = frame.f_locals
    copy = dict(scope)
    if (
        sys.version_info < (3, 13)
        and type(scope) is dict
        and scope is not frame.f_globals
        and frame.f_code.co_flags & _CO_OPTIMIZED
    ):
        scope.clear()
    return copy


def torch_module_dir() -> str:
    return _TORCH_DIR


class Site:
    """A position in user code: resolved to file, line and columns on demand.

    The line number is worked out from the code object and the instruction offset the
    first time it is read: `frame.f_lineno` scans the code's line table (about 0.8 us
    on a long function), and sites are recorded for every save and every write while
    only a failure reads them.
    """

    __slots__ = ("code", "lasti", "_lineno")

    def __init__(self, code: CodeType, lasti: int, lineno: int | None = None):
        self.code = code
        self.lasti = lasti
        self._lineno = lineno

    @property
    def lineno(self) -> int:
        if self._lineno is None:
            self._lineno = line_at_offset(self.code, self.lasti)
        return self._lineno

    def __eq__(self, other) -> bool:
        # (the pairs' comparison without building them: offsets first, the cheaper test)
        return isinstance(other, Site) and self.lasti == other.lasti and self.code == other.code

    def __hash__(self) -> int:
        return hash((id(self.code), self.lasti))

    @property
    def filename(self) -> str:
        return self.code.co_filename

    @property
    def function(self) -> str:
        return self.code.co_name

    def columns(self) -> tuple[int, int, int, int] | None:
        """(line, end_line, col, end_col) of the exact expression, 0-based columns."""
        positions = getattr(self.code, "co_positions", None)
        if positions is None or self.lasti < 0:
            return None
        try:
            position = next(itertools.islice(positions(), self.lasti // 2, None), None)
        except Exception:
            return None
        if position is None:
            return None
        line, end_line, col, end_col = position
        if line is None or col is None:
            return None
        return line, end_line or line, col, end_col if end_col is not None else col


def line_at_offset(code: CodeType, offset: int) -> int:
    """The source line of the instruction at byte `offset` of `code`, as `frame.f_lineno`
    gives it for a frame stopped there."""
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line if line is not None else code.co_firstlineno
    return code.co_firstlineno


def capture_user_stack(start_depth: int = 1, limit: int = 4) -> tuple[Site, ...]:
    """The innermost user frame and up to `limit - 1` user callers above it."""
    try:
        frame = sys._getframe(start_depth + 1)
    except ValueError:
        return ()
    cache = _internal_file_cache
    hosts = _host_file_cache  # (read inline: the walk passes several of torch's frames a write)
    sites = []
    while frame is not None:
        code = frame.f_code
        internal = cache.get(code.co_filename)
        if internal is None:
            internal = is_internal_file(code.co_filename)
        if not internal and code.co_name != CALLER_FRAME_NAME:
            sites.append(Site(code, frame.f_lasti))
            if len(sites) >= limit:
                break
        elif sites:
            host = hosts.get(code.co_filename)
            if host is None:
                host = is_host_file(code.co_filename)
            if host:
                break  # the test runner or notebook that called the user's code
        frame = frame.f_back
    return tuple(sites)
