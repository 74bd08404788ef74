"""Rare calls that change autograd state for everything after them, remembered with the user's line.

- `torch.set_grad_enabled(False)` called as a function turns gradients off until someone turns
  them on again; the loss that later has no grad_fn may be computed many calls away from it.
- `t.detach_()` turns `t` itself into a tensor without history; if autograd saved `t`,
  backward fails later with "Trying to use a saved tensor that has been detached in-place".
- `torch.inference_mode` and `torch.no_grad` blocks (and decorators): a tensor made under
  inference mode fails much later, where it is used ("Inference tensors cannot be saved for
  backward"), often far from the block that made it. The line to change is that block, so
  where such blocks are entered is remembered (`mode_entries`): their `__enter__` is wrapped.
  Only file names and line numbers are kept.

Both are called rarely (a few times per step at most, and only calls made from the user's own
code are kept), so wrapping them costs nothing measurable; `set_grad_enabled` is also called by
torch itself (every optimizer step), and those calls are skipped after one frame look-up. Only
code objects, offsets and weak references are kept: nothing here holds a tensor alive.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import sys
import threading
import weakref
from dataclasses import dataclass, field

import torch

from autograd_doctor.recording.frames import Site, _internal_file_cache, capture_user_stack, frame_locals, is_internal_file
from autograd_doctor.recording.own_frames import own_work_done, own_work_started

# Calls remembered; older ones are forgotten.
LOG_SIZE = 64
# Distinct inference_mode/no_grad entry sites kept (oldest forgotten first).
MAX_MODE_SITES = 64
# Distinct call sites kept per decorated function.
MAX_CALLERS = 4
# `detach_()` sites whose cut graphs are walked (AD316), the walks per site, and the graph nodes one
# walk visits at most (past it, the walk's parameters are not kept: nothing is concluded).
MAX_CUT_SITES = 32
MAX_CUT_WALKS = 4
MAX_CUT_NODES = 2000


@dataclass(eq=False)  # compared by identity: the log looks entries up often
class GradSwitch:
    """A `torch.set_grad_enabled(mode)` call made by the user's code."""

    enabled: bool
    site: Site
    thread: int
    seq: int
    callers: tuple[Site, ...] = ()  # the user's frames that led to the call, innermost first
    context_manager: bool = False  # set when the call turned out to be a `with` header


@dataclass(frozen=True)
class ModeEntry:
    """Where the user's code entered `torch.inference_mode` or `torch.no_grad`."""

    kind: str  # "inference_mode" or "no_grad"
    filename: str
    line: int
    decorator: bool  # @torch.inference_mode() on a def (line is the decorator's), else a with block
    function: str  # the decorated function's name, or the function holding the with block
    # The names of the block's function's local variables that held tensors requiring grad as the
    # with block was entered (names only: no tensor is kept).
    names_requiring_grad: frozenset = frozenset()
    # The session (see `session()`) that entered it: entries are kept across sessions (a notebook's
    # cells), so a name alone may be another program's function.
    session: int = 0
    # For a decorator: the user's lines (file, line) that called the decorated function in this
    # session, the first few seen (AD109 offers a copy of its result there when there is one).
    callers: tuple = ()


@dataclass(eq=False)
class GraphCut:
    """A user's `t.detach_()` line that cut a graph: how often it ran on a tensor with a grad_fn,
    and weak references to the leaves requiring grad that those graphs reached (the parameters
    whose gradient the cut took away), from the first few calls."""

    stack: tuple[Site, ...]
    session: int
    calls: int = 0
    walks: int = 0
    leaves: list = field(default_factory=list)  # weak references
    leaf_ids: set = field(default_factory=set)
    # the user's callers of the line at the walked calls (distinct, innermost first; `detach()` only)
    callers: list = field(default_factory=list)


@dataclass
class InPlaceDetach:
    """A `t.detach_()` call: where, and a weak reference to `t` (None if it cannot be weakly referenced)."""

    stack: tuple[Site, ...]
    tensor: object = field(default=None, repr=False)
    seq: int = 0


_lock = threading.Lock()
_switches: "collections.deque[GradSwitch]" = collections.deque(maxlen=LOG_SIZE)
_detaches: "collections.deque[InPlaceDetach]" = collections.deque(maxlen=LOG_SIZE)
_cuts: dict = {}  # (id of the code, offset) -> its GraphCut (AD316)
# The user's `t.detach()` lines (a copy, not in place) whose tensor had a grad_fn: (id of the code,
# offset) -> its GraphCut (AD214 names the one that cut an untrained optimizer's parameters off).
_copy_cuts: dict = {}
_by_site: dict = {}  # (code, offset, thread, enabled) -> its GradSwitch
_mode_entries: "collections.OrderedDict[tuple, ModeEntry]" = collections.OrderedDict()
_counter = itertools.count()
_active = 0
_session = 0  # counts the times remembering started from nothing
_originals: dict[str, object] = {}
_SET_GRAD_ENABLED = torch.autograd.grad_mode.set_grad_enabled
_MODES = {torch.autograd.grad_mode.inference_mode: "inference_mode", torch.autograd.grad_mode.no_grad: "no_grad"}


def activate() -> None:
    """Start remembering. What earlier sessions saw is kept: a notebook runs each cell under its own
    session, and a switch made in one cell is still in force in the next. A switch that turned
    gradients off is forgotten when they are on again as a session starts: code the doctor did not
    watch (a test fixture, a library, code run between sessions) turned them back on, and a later
    program must not be told that the old switch is in force."""
    global _active, _session
    with _lock:
        _active += 1
        if _active > 1:
            return
        _session += 1
        _cuts.clear()  # AD316 judges one session's cuts
        _copy_cuts.clear()
        if torch.is_grad_enabled():
            thread = threading.get_ident()
            for switch in [s for s in _switches if s.thread == thread and not s.enabled]:
                _switches.remove(switch)
        _originals["init"] = _SET_GRAD_ENABLED.__init__
        _originals["enter"] = _SET_GRAD_ENABLED.__enter__
        _originals["detach_"] = torch.Tensor.detach_
        _originals["detach"] = torch.Tensor.detach
        torch.Tensor.detach = _recording_detach_copy(_originals["detach"])
        _SET_GRAD_ENABLED.__init__ = _recording_init(_originals["init"])
        _SET_GRAD_ENABLED.__enter__ = _recording_enter(_originals["enter"])
        torch.Tensor.detach_ = _recording_detach(_originals["detach_"])
        for mode_class, kind in _MODES.items():
            _originals[mode_class] = mode_class.__enter__
            mode_class.__enter__ = _recording_mode_enter(_originals[mode_class], kind)
        _forward_no_grad.clear()  # AD318 judges one session's blocks
        _NO_GRAD = torch.autograd.grad_mode.no_grad
        _originals["no_grad_exit"] = _NO_GRAD.__exit__
        _NO_GRAD.__exit__ = _recording_no_grad_exit(_originals["no_grad_exit"])


def deactivate() -> None:
    global _active
    with _lock:
        if _active == 0:
            return
        _active -= 1
        if _active:
            return
        _SET_GRAD_ENABLED.__init__ = _originals.pop("init")
        _SET_GRAD_ENABLED.__enter__ = _originals.pop("enter")
        torch.Tensor.detach_ = _originals.pop("detach_")
        torch.Tensor.detach = _originals.pop("detach")
        for mode_class in _MODES:
            mode_class.__enter__ = _originals.pop(mode_class)
        torch.autograd.grad_mode.no_grad.__exit__ = _originals.pop("no_grad_exit")


def grad_switches() -> list[GradSwitch]:
    """The user's `set_grad_enabled` calls on this thread, the most recent first."""
    thread = threading.get_ident()
    with _lock:
        return [switch for switch in reversed(_switches) if switch.thread == thread]


def switch_in_force() -> GradSwitch | None:
    """The user's `torch.set_grad_enabled(False)` call that left gradients off now (none when
    they are on, or when the last switch seen turned them on)."""
    if torch.is_grad_enabled():
        return None
    for switch in grad_switches():
        if switch.context_manager:
            continue  # a `with` block restores the mode when it ends
        return None if switch.enabled else switch
    return None


def last_switch_off() -> GradSwitch | None:
    """The most recent `torch.set_grad_enabled(False)` call made as a plain function call."""
    for switch in grad_switches():
        if not switch.enabled and not switch.context_manager:
            return switch
    return None


def in_place_detaches() -> list[InPlaceDetach]:
    """The user's `detach_()` calls whose tensor is still alive, the most recent first."""
    with _lock:
        entries = list(reversed(_detaches))
    return [entry for entry in entries if entry.tensor is None or entry.tensor() is not None]


def mode_entries(kind: str) -> list[ModeEntry]:
    """The sites where `kind` ("inference_mode" or "no_grad") was entered, the most recent first."""
    with _lock:
        return [entry for entry in reversed(_mode_entries.values()) if entry.kind == kind]


def forget_mode_entries() -> None:
    with _lock:
        _mode_entries.clear()


def session() -> int:
    """The number of the session now remembering (each outermost activate() starts one)."""
    return _session


def _caller_site(depth: int) -> Site | None:
    """The direct caller's position when it is the user's code (torch's own calls are skipped)."""
    try:
        frame = sys._getframe(depth + 1)
    except ValueError:
        return None
    # (the cache read inline: torch's optimizers and clip_grad_norm_ make a dozen switches a step)
    internal = _internal_file_cache.get(frame.f_code.co_filename)
    if internal is None:
        internal = is_internal_file(frame.f_code.co_filename)
    if internal:
        return None
    return Site(frame.f_code, frame.f_lasti)


def _remember_switch(site: Site, enabled: bool) -> GradSwitch:
    """Log a switch; a line seen before (`with torch.set_grad_enabled(train):` in a loop) moves
    its entry to the end instead of walking the stack again."""
    thread = threading.get_ident()
    # By identity: code objects compare equal across files (co_filename is not compared), so the
    # same helper in two programs would share one entry. The entry keeps its code alive.
    key = (id(site.code), site.lasti, thread, enabled)
    with _lock:
        switch = _by_site.get(key)
        if switch is not None and switch in _switches:
            _switches.remove(switch)
            switch.seq, switch.context_manager = next(_counter), False
            _switches.append(switch)
            return switch
    switch = GradSwitch(enabled, site, thread, next(_counter), capture_user_stack(2, limit=3)[1:])
    with _lock:
        if len(_by_site) > 4 * LOG_SIZE:
            _by_site.clear()
        _by_site[key] = switch
        _switches.append(switch)
    return switch


def _recording_init(original):
    def __init__(self, mode):
        original(self, mode)
        try:
            # `_caller_site(1)` written out: torch's optimizers and clip_grad_norm_ make a dozen
            # of these a step, all from torch's files.
            frame = sys._getframe(1)
            filename = frame.f_code.co_filename
            internal = _internal_file_cache.get(filename)
            if internal is None:
                internal = is_internal_file(filename)
            if not internal:
                self._autograd_doctor_switch = _remember_switch(Site(frame.f_code, frame.f_lasti), bool(mode))
        except Exception:
            pass  # bookkeeping must never break the user's call

    __init__.__wrapped__ = original
    return __init__


def _recording_enter(original):
    def __enter__(self):
        result = original(self)
        switch = getattr(self, "_autograd_doctor_switch", None)
        if switch is not None:
            switch.context_manager = True
        return result

    __enter__.__wrapped__ = original
    return __enter__


def graph_cuts() -> list[GraphCut]:
    """The user's `detach_()` lines of this session that cut a graph (AD316)."""
    with _lock:
        return [cut for cut in _cuts.values() if cut.session == _session]


def detach_copy_cuts() -> list[GraphCut]:
    """The user's `detach()` lines of this session that were called on a tensor with a graph (AD214)."""
    with _lock:
        return [cut for cut in _copy_cuts.values() if cut.session == _session]


def _note_copy_cut(tensor) -> None:
    """`tensor.detach()` called directly from the user's file on a tensor with a grad_fn: count the
    line's calls, and at its first few calls walk (bounded) the graph the copy leaves behind for
    the leaves requiring grad it reaches (weak references). One frame look-up per call; a
    `detach()` torch calls itself is skipped there."""
    frame = sys._getframe(2)
    code = frame.f_code
    if is_internal_file(code.co_filename):
        return
    key = (id(code), frame.f_lasti)
    with _lock:
        cut = _copy_cuts.get(key)
        if cut is None or cut.session != _session:
            if len(_copy_cuts) >= MAX_CUT_SITES and key not in _copy_cuts:
                return
            cut = _copy_cuts[key] = GraphCut((Site(code, frame.f_lasti),), _session)
        cut.calls += 1
        if cut.walks >= MAX_CUT_WALKS:
            return
        cut.walks += 1
    callers = capture_user_stack(2, limit=4)[1:]  # at the walked calls only: a few per line
    with _lock:
        if callers and callers not in cut.callers:
            cut.callers.append(callers)
    _keep_leaves(cut, _graph_leaves(tensor.grad_fn))


def _recording_detach_copy(original):
    def detach(self):
        try:
            if self.grad_fn is not None:
                _note_copy_cut(self)
        except Exception:
            pass  # bookkeeping must never break the user's call
        return original(self)

    detach.__wrapped__ = original
    detach.__name__ = "detach"
    detach.__qualname__ = "Tensor.detach"
    return detach


def _keep_leaves(cut: GraphCut, leaves: list | None) -> None:
    """Add the leaves a walk found to the cut's, by weak reference (None: past the walk's bound)."""
    if leaves is None:
        return
    with _lock:
        for leaf in leaves:
            if id(leaf) not in cut.leaf_ids:
                try:
                    cut.leaves.append(weakref.ref(leaf))
                except TypeError:
                    continue
                cut.leaf_ids.add(id(leaf))


def _graph_leaves(node) -> list | None:
    """The leaves requiring grad that a bounded walk from `node` reaches (None past the bound)."""
    seen, stack, leaves = {id(node)}, [node], []
    while stack:
        current = stack.pop()
        variable = getattr(current, "variable", None)
        if variable is not None:
            leaves.append(variable)
        for child, _ in getattr(current, "next_functions", ()):
            if child is not None and id(child) not in seen:
                if len(seen) >= MAX_CUT_NODES:
                    return None
                seen.add(id(child))
                stack.append(child)
    return leaves


def _note_cut(tensor, stack: tuple) -> None:
    """Before `tensor.detach_()` (called from `stack`): which parameters the graph it is about to
    lose reaches."""
    grad_fn = tensor.grad_fn
    if grad_fn is None:
        return
    key = (id(stack[0].code), stack[0].lasti)
    with _lock:
        cut = _cuts.get(key)
        if cut is None or cut.session != _session:
            if len(_cuts) >= MAX_CUT_SITES and key not in _cuts:
                return
            cut = _cuts[key] = GraphCut(stack, _session)
        cut.calls += 1
        if cut.walks >= MAX_CUT_WALKS:
            return
        cut.walks += 1
    _keep_leaves(cut, _graph_leaves(grad_fn))


def _recording_detach(original):
    def detach_(self):
        try:
            stack = capture_user_stack(1, limit=2)  # one capture for both records below
        except Exception:
            stack = ()
        if stack:
            try:
                _note_cut(self, stack)
            except Exception:
                pass
        result = original(self)
        if stack:
            try:
                try:
                    reference = weakref.ref(self)
                except TypeError:
                    reference = None
                with _lock:
                    _detaches.append(InPlaceDetach(stack, reference, next(_counter)))
            except Exception:
                pass
        return result

    detach_.__wrapped__ = original
    detach_.__name__ = "detach_"
    detach_.__qualname__ = "Tensor.detach_"
    return detach_


def _recording_mode_enter(original, kind: str):
    def __enter__(self):
        result = original(self)
        if getattr(self, "mode", True):
            try:
                _remember_mode_entry(kind)
            except Exception:
                pass  # bookkeeping must never break the user's block
        if kind == "no_grad" and _peek_interpreter is not None:
            try:
                if _peek_interpreter() is not None:  # inside a torch.func transform (rare): AD318's look
                    _note_forward_transform(self)
            except Exception:
                pass
        return result

    __enter__.__wrapped__ = original
    return __enter__


def _recording_no_grad_exit(original):
    def __exit__(self, *args):
        entered = self.__dict__.pop("_autograd_doctor_forward_transform", None)
        if entered is not None:
            try:
                _note_differentiated_no_grad_results(entered)
            except Exception:
                pass
        return original(self, *args)

    __exit__.__wrapped__ = original
    return __exit__


# AD318: `with torch.no_grad():` blocks of the user's, entered while torch.func's forward-mode
# transform (jvp, jacfwd) runs, whose results carry a tangent anyway (forward-mode AD does not honour
# grad mode). Keyed by (file, line of the `with`); at most MAX_FORWARD_SITES sites.
MAX_FORWARD_SITES = 16


@dataclass
class DifferentiatedNoGrad:
    filename: str
    line: int  # the `with` statement's line
    names: tuple  # the block's locals (new or rebound in it) that carry a tangent
    calls: int = 1
    nested: bool = False  # the forward-mode transform encloses a reverse-mode one (hessian)


_forward_no_grad: "collections.OrderedDict[tuple, DifferentiatedNoGrad]" = collections.OrderedDict()
_peek_interpreter = getattr(getattr(torch._C, "_functorch", None), "peek_interpreter_stack", None)
_interpreter_stack = getattr(getattr(torch._C, "_functorch", None), "get_interpreter_stack", None)


def differentiated_no_grad_blocks() -> list[DifferentiatedNoGrad]:
    """The user's no_grad blocks run inside a forward-mode torch.func transform whose results carry
    a tangent (AD318), the first seen first."""
    with _lock:
        return list(_forward_no_grad.values())


def _note_forward_transform(context) -> None:
    """On entering `with torch.no_grad():` in the user's file while the innermost torch.func
    transform is forward-mode (jvp; jacfwd is vmap over jvp): remember the frame's locals by name
    and object id (no reference kept), to tell at the exit which the block bound."""
    if _peek_interpreter is None:
        return
    interpreter = _peek_interpreter()
    if interpreter is None:
        return  # outside every torch.func transform: the common case, one call
    if getattr(interpreter.key(), "name", "") == "Jvp":
        nested = False
    elif _interpreter_stack is not None and _pop_interpreter is not None and any(
            getattr(outer.key(), "name", "") == "Jvp" for outer in (_interpreter_stack() or ())):
        # hessian = jacfwd(jacrev(f)), jvp(grad(f)): the innermost reverse mode honours no_grad, the
        # enclosing forward mode does not, so the block's values still carry its tangent
        nested = True
    else:
        return
    frame = sys._getframe(2)
    if is_internal_file(frame.f_code.co_filename):
        return
    before = {name: id(value) for name, value in
              itertools.islice(frame_locals(frame).items(), MAX_LOCALS_LOOKED_AT)}
    context.__dict__["_autograd_doctor_forward_transform"] = (frame.f_code, frame.f_lineno, before, nested)


try:
    from torch._functorch.pyfunctorch import temporarily_pop_interpreter_stack as _pop_interpreter
except Exception:  # pragma: no cover - a torch without it: nested transforms are not looked at
    _pop_interpreter = None


def _carries_outer_tangent(value) -> bool:
    """Whether `value`, made inside a reverse-mode transform nested in a forward-mode one, carries
    the forward-mode tangent: unwrap it level by level (each inner level popped for the look, then
    pushed back) down to a Jvp level and ask there. A value not wrapped at a level (made from
    constants there) stops the walk: no tangent claimed."""
    import contextlib

    from torch.autograd.forward_ad import unpack_dual

    functorch = torch._C._functorch
    with contextlib.ExitStack() as popped:
        for interpreter in reversed(_interpreter_stack() or ()):
            if functorch.maybe_get_level(value) != interpreter.level():
                return False
            if getattr(interpreter.key(), "name", "") == "Jvp" and unpack_dual(value).tangent is not None:
                return True
            popped.enter_context(_pop_interpreter())
            value = functorch.get_unwrapped(value)
    return False


def _note_differentiated_no_grad_results(entered) -> None:
    code, line, before, nested = entered
    frame = sys._getframe(2)
    if frame.f_code is not code:
        return
    from torch.autograd.forward_ad import unpack_dual

    names = []
    existing = set(before.values())  # `y = x` in the block: the same tensor, which reverse mode tracks too
    started = own_work_started()
    try:
        for name, value in itertools.islice(frame_locals(frame).items(), MAX_LOCALS_LOOKED_AT):
            if not isinstance(value, torch.Tensor) or id(value) in existing:
                continue
            if (_carries_outer_tangent(value) if nested else unpack_dual(value).tangent is not None):
                names.append(name)
    finally:
        own_work_done(started)
    if not names:
        return
    key = (code.co_filename, line)
    with _lock:
        found = _forward_no_grad.get(key)
        if found is not None:
            found.calls += 1
            found.names = tuple(dict.fromkeys(found.names + tuple(names)))
            found.nested = found.nested or nested
            return
        _forward_no_grad[key] = DifferentiatedNoGrad(code.co_filename, line, tuple(names), nested=nested)
        while len(_forward_no_grad) > MAX_FORWARD_SITES:
            _forward_no_grad.popitem(last=False)


def _remember_mode_entry(kind: str) -> None:
    """Record the site only when the block or decorator is the user's own: torch's internal
    uses (nn.init under no_grad) would otherwise be charged to the user's calling line."""
    frame = sys._getframe(2)
    code = frame.f_code
    if code.co_name == "decorate_context" and "func" in code.co_freevars:
        func = frame_locals(frame).get("func")
        func_code = getattr(func, "__code__", None)
        if func_code is not None and (not is_internal_file(func_code.co_filename) or _instance_method_rebound(func)):
            caller = frame.f_back
            callers = ((caller.f_code.co_filename, caller.f_lineno),) \
                if caller is not None and not is_internal_file(caller.f_code.co_filename) else ()
            _store_mode_entry(ModeEntry(kind, func_code.co_filename, func_code.co_firstlineno, True,
                                        func_code.co_name, session=_session, callers=callers))
    elif not is_internal_file(code.co_filename):
        _store_mode_entry(ModeEntry(kind, code.co_filename, frame.f_lineno, False, code.co_name,
                                    _names_requiring_grad(frame), _session))


def _instance_method_rebound(func) -> bool:
    """Whether `func` is a method bound to a module whose own `__dict__` holds a replacement of it:
    the decorator was called on `model.forward` at run time (`model.forward =
    torch.no_grad()(model.forward)`), by the user, even when the method is torch's own
    (nn.Sequential.forward). torch's own decorated methods are decorated where they are defined, on the
    function, never bound."""
    owner = getattr(func, "__self__", None)
    if not isinstance(owner, torch.nn.Module):
        return False
    try:
        own = object.__getattribute__(owner, "__dict__")
    except AttributeError:
        return False
    return isinstance(own, dict) and getattr(own.get(func.__name__), "__wrapped__", None) is func


# Local variables looked at per with block entered.
MAX_LOCALS_LOOKED_AT = 200


def _names_requiring_grad(frame) -> frozenset:
    # frame_locals, not frame.f_locals: before Python 3.13 reading f_locals leaves a snapshot on
    # the frame that would keep each local tensor alive after the program drops it.
    names = []
    started = own_work_started()  # a Tensor subclass's __torch_function__ does not see our reads
    try:
        for name, value in itertools.islice(frame_locals(frame).items(), MAX_LOCALS_LOOKED_AT):
            if isinstance(value, torch.Tensor) and value.requires_grad:
                names.append(name)
    finally:
        own_work_done(started)
    return frozenset(names)


def _store_mode_entry(entry: ModeEntry) -> None:
    key = (entry.kind, entry.filename, entry.line)
    with _lock:
        previous = _mode_entries.pop(key, None)
        if previous is not None and previous.session == entry.session and previous.callers \
                and previous.callers != entry.callers:
            merged = previous.callers + tuple(c for c in entry.callers if c not in previous.callers)
            entry = dataclasses.replace(entry, callers=merged[:MAX_CALLERS])
        _mode_entries[key] = entry
        while len(_mode_entries) > MAX_MODE_SITES:
            _mode_entries.popitem(last=False)
