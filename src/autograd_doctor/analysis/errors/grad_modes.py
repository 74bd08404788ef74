"""Where the program entered `torch.inference_mode` and `torch.no_grad`, while the doctor runs.

A tensor made under inference mode fails much later, where it is used ("Inference tensors
cannot be saved for backward"), often far from the block or decorator that made it. The
line to change is that block, so the doctor remembers where such blocks were entered:
their `__enter__` is wrapped while the doctor is active. They are entered rarely (once per
step at most), so a short walk up the stack each time costs nothing measurable. Only file
names and line numbers are kept.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import is_internal_file

# Distinct entry sites kept (oldest forgotten first).
MAX_SITES = 64


@dataclass(frozen=True)
class ModeEntry:
    kind: str  # "inference_mode" or "no_grad"
    filename: str
    line: int
    decorator: bool  # @torch.inference_mode() on a def (line is the decorator's), else a with block
    function: str  # the decorated function's name, or the function holding the with block


_lock = threading.Lock()
_entries: "OrderedDict[tuple, ModeEntry]" = OrderedDict()
_active = 0
_originals: dict[type, object] = {}


def entries(kind: str) -> list[ModeEntry]:
    """The sites where `kind` was entered, the most recently entered first."""
    with _lock:
        return [entry for entry in reversed(_entries.values()) if entry.kind == kind]


def activate() -> None:
    global _active
    with _lock:
        _active += 1
        if _active > 1:
            return
        for mode_class, kind in _MODES.items():
            original = mode_class.__enter__
            _originals[mode_class] = original
            mode_class.__enter__ = _recording_enter(original, kind)


def deactivate() -> None:
    global _active
    with _lock:
        if _active == 0:
            return
        _active -= 1
        if _active:
            return
        for mode_class, original in _originals.items():
            mode_class.__enter__ = original
        _originals.clear()


def forget() -> None:
    with _lock:
        _entries.clear()


_MODES = {torch.autograd.grad_mode.inference_mode: "inference_mode", torch.autograd.grad_mode.no_grad: "no_grad"}


def _recording_enter(original, kind: str):
    def __enter__(self):
        result = original(self)
        if getattr(self, "mode", True):
            try:
                _remember(kind)
            except Exception:
                pass  # bookkeeping must never break the user's block
        return result

    __enter__.__wrapped__ = original
    return __enter__


def _remember(kind: str) -> None:
    """Record the site only when the block or decorator is the user's own: torch's internal
    uses (nn.init under no_grad) would otherwise be charged to the user's calling line."""
    frame = sys._getframe(2)
    code = frame.f_code
    if code.co_name == "decorate_context" and "func" in code.co_freevars:
        func_code = getattr(frame.f_locals.get("func"), "__code__", None)
        if func_code is not None and not is_internal_file(func_code.co_filename):
            _store(ModeEntry(kind, func_code.co_filename, func_code.co_firstlineno, True, func_code.co_name))
    elif not is_internal_file(code.co_filename):
        _store(ModeEntry(kind, code.co_filename, frame.f_lineno, False, code.co_name))


def _store(entry: ModeEntry) -> None:
    key = (entry.kind, entry.filename, entry.line)
    with _lock:
        _entries.pop(key, None)
        _entries[key] = entry
        while len(_entries) > MAX_SITES:
            _entries.popitem(last=False)
