"""Keep the doctor's own frames out of what the user sees: tracebacks and warning locations.

Outside its report the doctor must be invisible. Two things would show it:

- a traceback that passes through our wrappers (`patches.py`, the recorder, a
  `TorchFunctionMode`, `watch()`, `autograd-doctor run`) lists our frames between the user's
  line and torch's. `hide_our_frames(error)` rebuilds the traceback of the exception, and of
  every exception chained to it (`__cause__`, `__context__`, exception groups), without them.
  Each front end calls it where an exception leaves our code.
- a warning that torch's C++ code raises (`TORCH_WARN`, `PyErr_WarnEx(..., 1)`) is
  attributed to the innermost Python frame: inside a wrapper that is ours
  (`recording/aliases.py:132` instead of the user's `torch.tensor(x)` line), and warnings
  shown "once per location" from two user lines would collapse into one. `call_as_caller`
  makes that call from a frame that has the caller's file, line and globals, so the
  warnings module sees exactly what it sees without the doctor (location, module name
  for filters, `__warningregistry__`). `warnings.warn(skip_file_prefixes=...)` (3.12) cannot
  help here: the warning is raised by torch, not by us.

A third would show it to a `Tensor` subclass: its `__torch_function__` runs at every
method call and attribute read on its tensors (pypose's LieTensor warns "Tensor Shape
Invalid" at a `reshape(-1)`, a logging subclass counts calls). The doctor's own reads
(`.grad_fn`, `._version`, a fingerprint's `reshape`/`view`/`sum`) must not reach it:
`own_work_started()` turns subclasses' `__torch_function__` off for the doctor's work, as
`torch.Tensor.__torch_function__` itself does around the op it runs, and `call_from` turns
it back to the program's state for the one call that is the program's.
"""

from __future__ import annotations

import os
import sys
import threading
from types import CodeType, FunctionType, TracebackType

from autograd_doctor import compat

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

# The name of the stand-in frames made by `call_as_caller`; their file is the caller's.
CALLER_FRAME_NAME = "<autograd-doctor: call>"


def is_our_code(code: CodeType) -> bool:
    """A code object of the doctor: a file of this package, or a stand-in caller frame."""
    return code.co_filename.startswith(PACKAGE_DIR) or code.co_name == CALLER_FRAME_NAME


def without_our_frames(traceback: TracebackType | None) -> TracebackType | None:
    """The same traceback entries, in order, less those of our code: the first entry that is
    not ours, with the chain relinked past ours in place (`tb_next` is writable), so every
    holder of the traceback (pytest's ExceptionInfo, `sys.last_traceback`, a debugger) sees
    the frames it sees without the doctor. None when every entry is ours.

        >>> without_our_frames(None) is None
        True
    """
    kept = []
    while traceback is not None:
        if not is_our_code(traceback.tb_frame.f_code):
            kept.append(traceback)
        traceback = traceback.tb_next
    for outer, inner in zip(kept, kept[1:] + [None]):
        if outer.tb_next is not inner:
            outer.tb_next = inner
    return kept[0] if kept else None


def _has_our_frames(traceback: TracebackType | None) -> bool:
    while traceback is not None:
        if is_our_code(traceback.tb_frame.f_code):
            return True
        traceback = traceback.tb_next
    return False


def hide_our_frames(error: BaseException | None) -> BaseException | None:
    """Drop our frames from `error`'s traceback and from every exception chained to it;
    returns `error` (the same object: its type, message and notes are untouched)."""
    pending = [error]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        try:
            if _has_our_frames(current.__traceback__):
                current.__traceback__ = without_our_frames(current.__traceback__)
        except Exception:
            pass  # an exception that refuses a new traceback keeps its own
        pending.append(current.__cause__)
        pending.append(current.__context__)
        pending.extend(getattr(current, "exceptions", None) or ())  # BaseExceptionGroup
    return error


# ---- warnings: call torch from a frame that looks like the caller's --------------------

# One line, so that the call is on the stand-in's first line, which becomes the caller's.
_CALLER_TEMPLATE = compile("def call(function, args, kwargs): return function(*args, **kwargs)\n",
                           "<autograd-doctor>", "exec")
_CALL_CODE = next(const for const in _CALLER_TEMPLATE.co_consts if isinstance(const, CodeType))
# (id of the caller's code, instruction offset) -> (that code, a stand-in function whose code
# has the caller's file and line and whose globals are the caller's). Keyed by id: hashing a
# code object hashes its contents, on every write the doctor wraps.
# Only frames outside the doctor are keys: a wrapper that finds its caller here may skip the
# walk past our own frames (`patches.py` does, for every write it wraps).
stand_ins_by_call_site: dict[tuple[int, int], tuple[CodeType, FunctionType]] = {}
MAX_STAND_INS = 4096


def _new_stand_in(frame) -> FunctionType:
    code = frame.f_code
    line = frame.f_lineno or code.co_firstlineno
    replace = dict(co_filename=code.co_filename, co_name=CALLER_FRAME_NAME, co_firstlineno=line)
    if sys.version_info >= (3, 11):
        replace["co_qualname"] = CALLER_FRAME_NAME
    stand_in_code = _CALL_CODE.replace(**replace)
    function = FunctionType(stand_in_code, frame.f_globals, CALLER_FRAME_NAME)
    if len(stand_ins_by_call_site) >= MAX_STAND_INS:
        stand_ins_by_call_site.clear()
    stand_ins_by_call_site[(id(code), frame.f_lasti)] = (code, function)
    return function


def call_as_caller(function, args: tuple, kwargs: dict):
    """`function(*args, **kwargs)`, called from a stand-in for the nearest frame that is not
    ours, so that a warning torch raises inside is attributed where it would be without the
    doctor. The stand-in's frame is dropped from tracebacks like our own frames."""
    if not _own_work.active:  # (call_from's first test, written out: a call less a write)
        return _call_from(sys._getframe(1), function, args, kwargs)
    return call_from(sys._getframe(1), function, args, kwargs)


def call_from(frame, function, args: tuple, kwargs: dict):
    """`call_as_caller` for a wrapper that passes its caller's frame (`sys._getframe(1)`):
    asking for that frame directly spares making a frame object for the wrapper's own.
    Called from the doctor's own work, it runs `function` under the torch-function state of
    the code that started that work (a Tensor subclass sees the program's call as without us).

    It runs for every write the doctor wraps (an optimizer's step makes hundreds), so the
    test of `is_our_code` is written out here and a known call site costs one look-up."""
    own = _own_work
    if not own.active:
        return _call_from(frame, function, args, kwargs)
    ours = _state_now()
    own.active = False
    _set_state(own.program_states[-1])
    try:
        return _call_from(frame, function, args, kwargs)
    finally:
        own.active = True
        _set_state(ours)


def _call_from(frame, function, args: tuple, kwargs: dict):
    code = frame.f_code
    while code.co_filename.startswith(PACKAGE_DIR) or code.co_name == CALLER_FRAME_NAME:
        frame = frame.f_back
        if frame is None:
            return function(*args, **kwargs)
        code = frame.f_code
    known = stand_ins_by_call_site.get((id(code), frame.f_lasti))
    if known is not None and known[0] is code and known[1].__globals__ is frame.f_globals:
        return known[1](function, args, kwargs)
    return _new_stand_in(frame)(function, args, kwargs)


# ---- Tensor subclasses: their __torch_function__ sees the program's calls, not ours ----

_get_state = compat.lookup("torch._C._get_torch_function_state")
_set_state = compat.lookup("torch._C._set_torch_function_state")
_STATES = compat.lookup("torch._C._TorchFunctionState")
_ENABLED = getattr(_STATES, "ENABLED", None)
_SUBCLASSES_OFF = getattr(_STATES, "SUBCLASSES_DISABLED", None)
_ALL_OFF = getattr(_STATES, "ALL_DISABLED", None)
_USABLE = None not in (_get_state, _set_state, _ENABLED, _SUBCLASSES_OFF)
# Reading the state as an enum makes a new enum object, and comparing two costs a call into
# pybind11: together about twenty times a plain call, around every piece of the doctor's work
# (each backward(), zero_grad(), optimizer hook). Two functions returning a bool tell which of
# the three states it is, and the members kept here are compared by identity.
_is_enabled = compat.lookup("torch._C._is_torch_function_enabled")
_is_all_disabled = compat.lookup("torch._C._is_torch_function_all_disabled")
_STATE_BY_BOOLS = _USABLE and None not in (_is_enabled, _is_all_disabled, _ALL_OFF) and \
    len(getattr(_STATES, "__members__", ())) == 3


def _state_now():
    """torch's torch-function state on this thread: `_ENABLED`, `_SUBCLASSES_OFF` (those very
    objects) or the third state."""
    if _STATE_BY_BOOLS:
        if _is_enabled():
            return _ENABLED
        return _ALL_OFF if _is_all_disabled() else _SUBCLASSES_OFF
    state = _get_state()
    return _ENABLED if state == _ENABLED else state


class _OwnWork(threading.local):
    """Per thread (torch's torch-function state is per thread): whether the doctor's own code
    is running, and for each piece of its work under way the state of the code that started it."""

    def __init__(self):
        self.active = False
        self.program_states = []


_own_work = _OwnWork()


def own_work_started():
    """Turn Tensor subclasses' `__torch_function__` off for the doctor's own work (a wrapper's
    or a hook's); returns what `own_work_done` needs to turn it back. The program's call made
    from inside the work goes through `call_from`, which runs it under the program's state."""
    if not _USABLE:
        return None
    own = _own_work
    state = _state_now()
    own.program_states.append(state)
    before = own.active
    own.active = True
    if state is _ENABLED:
        _set_state(_SUBCLASSES_OFF)
    return state, before


def own_work_done(started) -> None:
    if started is None:
        return
    own = _own_work
    own.program_states.pop()
    own.active = started[1]
    _set_state(started[0])


def as_own_work(function):
    """`function` (a hook of the doctor's that torch calls) run as the doctor's own work."""

    def own_work(*args, **kwargs):
        # `own_work_started` and `own_work_done` written out: torch calls these hooks at every
        # optimizer step, and a small step pays their calls more than their work.
        if not _USABLE:
            return function(*args, **kwargs)
        own = _own_work
        state = _state_now()
        own.program_states.append(state)
        before = own.active
        own.active = True
        if state is _ENABLED:
            _set_state(_SUBCLASSES_OFF)
        try:
            return function(*args, **kwargs)
        finally:
            own.program_states.pop()
            own.active = before
            _set_state(state)

    own_work.__name__ = getattr(function, "__name__", "own_work")
    own_work.__qualname__ = getattr(function, "__qualname__", own_work.__name__)
    return own_work


__all__ = ["PACKAGE_DIR", "CALLER_FRAME_NAME", "is_our_code", "without_our_frames", "hide_our_frames",
           "call_as_caller", "call_from", "stand_ins_by_call_site", "own_work_started", "own_work_done", "as_own_work"]
