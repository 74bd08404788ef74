"""Fast write capture: wrap torch's in-place entry points in Python.

A TorchFunctionMode would see every torch call, at about 18,000 instructions each (callgrind,
README "Overhead"; a small `torch.add` itself costs about 9,300): it would about triple the
cost of every small op. Writes are a small fraction of calls, so instead the
in-place methods and functions themselves are wrapped while a doctor is active; every
other op runs untouched. The wrappers call the original with the same arguments and
return its result, so what the program computes does not change.

Wrapped: every `Tensor` method ending in `_` that writes (`add_`, `copy_`, ...), the
in-place operators (`__setitem__`, `__iadd__`, ...), `torch.*_` and `torch._foreach_*_`
functions, the in-place activations that `torch.nn.functional` calls (`torch.relu_`,
`torch._C._nn.leaky_relu_`, `torch._VF.dropout_`, ...), `backward()`, and the factories
that create leaves with `requires_grad=True`. Not seen: `out=` arguments (use
`capture="mode"`), and writes from C++ code, NumPy views or custom kernels.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import sys
import threading

import torch

from autograd_doctor import compat
from autograd_doctor.recording.calls import (
    _TORCH_DIR, _TORCH_PASS_THROUGH, INPLACE_DUNDERS, NOT_WRITE, WRITES_FIRST_ARG,
    VIEW_METHODS, WRITES_FOREACH_LIST, classify_call,
)
from autograd_doctor.recording.own_frames import (
    call_from, hide_our_frames, own_work_done, own_work_started, stand_ins_by_call_site,
)
from autograd_doctor.recording.recorder import Recorder

FACTORIES = (
    "tensor", "randn", "rand", "zeros", "ones", "empty", "full", "arange", "linspace", "eye",
    "randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like", "as_tensor",
)


_lock = threading.Lock()
_active: list[Recorder] = []
_saved_originals: list[tuple[object, str, object]] = []


def _current() -> Recorder | None:
    return _active[-1] if _active else None


def _as_own_work(call, *args):
    """`call(*args)`, one of the recorder's methods, as the doctor's own work: a Tensor
    subclass's `__torch_function__` sees only the program's call inside it (`own_frames`)."""
    started = own_work_started()
    try:
        return call(*args)
    finally:
        own_work_done(started)


# A write, view or detach() of a plain tensor or Parameter skips the switch above (about a
# microsecond a call, on the hottest path): what the recorder reads there is that tensor and
# what shares its memory. Anything else (a subclass, a list of a foreach op) takes it.
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def _plain(value) -> bool:
    return type(value) in _PLAIN_TYPES


def _write_wrapper(original, op: str, kind: int, site: tuple):
    def write(*args, **kwargs):
        try:
            recorder = _active[-1] if _active else None
            if recorder is None or recorder.quiet_step:
                # An optimizer step that cannot touch anything watched (see Recorder.quiet_step).
                # The next quiet steps write through torch's own method (`_quiet_step_changed`).
                if recorder is not None:
                    _quiet_sites[site] = None
                # Its hundreds of writes come from a few lines: call_from's look-up, written out
                # here for a call site seen before, spares a call per write.
                caller = sys._getframe(1)
                code = caller.f_code
                known = stand_ins_by_call_site.get((id(code), caller.f_lasti))
                if known is not None and known[0] is code and known[1].__globals__ is caller.f_globals:
                    return known[1](original, args, kwargs)
                return call_from(caller, original, args, kwargs)
            # Fast path for torch's own writes while no saved tensor or tracked view is alive:
            # there is nothing they could hit (light mode logs them all: it saves nothing).
            if not (recorder.light or recorder.pending or recorder.saves_by_storage or recorder.view_storages):
                caller = sys._getframe(1)
                filename = caller.f_code.co_filename
                if filename.startswith(_TORCH_DIR) and filename not in _TORCH_PASS_THROUGH:
                    try:
                        return call_from(caller, original, args, kwargs)
                    except Exception as error:
                        # A write torch's Python code makes for the user (`F.relu(x,
                        # inplace=True)` -> `torch.relu_`) that PyTorch refuses is still the
                        # user's write: say why, as the default mode does.
                        recorder.write_failed(error, original, args, kwargs)
                        raise
            if args and _plain(args[0]):
                return recorder.call_write(original, op, kind, args, kwargs)
            return _as_own_work(recorder.call_write, original, op, kind, args, kwargs)
        except BaseException as error:
            hide_our_frames(error)  # the traceback goes from the user's line to torch's
            raise

    return _dress(write, original)


def _backward_wrapper(original):
    def backward(*args, **kwargs):
        try:
            recorder = _active[-1] if _active else None
            if recorder is None:
                return original(*args, **kwargs)
            return _as_own_work(recorder.call_backward, original, args, kwargs)
        except BaseException as error:
            hide_our_frames(error)
            raise

    return _dress(backward, original)


def _tensor_backward_wrapper(original):
    """`Tensor.backward`, which calls `torch.autograd.backward`. PyTorch's Python hooks warn with
    a `stacklevel` counted through those two frames to the user's `loss.backward()` line (a
    module's full backward hook: "Full backward hook is firing ..."); our wrapper of
    `torch.autograd.backward` would add its frames between them, and the warning would name a
    file of ours. For the time of the call, Tensor.backward finds the plain function (a call
    made inside a backward is passed through unrecorded anyway: `Recorder.call_backward`)."""

    def backward(*args, **kwargs):
        try:
            recorder = _active[-1] if _active else None
            if recorder is None:
                return original(*args, **kwargs)
            wrapped = torch.autograd.backward
            plain = getattr(wrapped, "__autograd_doctor_wrapped__", None)
            if plain is None or recorder.write_depth:
                return _as_own_work(recorder.call_backward, original, args, kwargs)
            torch.autograd.backward = plain
            try:
                return _as_own_work(recorder.call_backward, original, args, kwargs)
            finally:
                if _active and torch.autograd.backward is plain:  # not unwrapped meanwhile
                    torch.autograd.backward = wrapped
        except BaseException as error:
            hide_our_frames(error)
            raise

    return _dress(backward, original)


def _factory_wrapper(original):
    def factory(*args, **kwargs):
        try:
            recorder = _active[-1] if _active else None
            if recorder is None or kwargs.get("requires_grad") is not True:
                return original(*args, **kwargs)
            return _as_own_work(recorder.call_factory, original, args, kwargs)
        except BaseException as error:
            hide_our_frames(error)
            raise

    return _dress(factory, original)


def _requires_grad_wrapper(original):
    def requires_grad_(self, requires_grad=True):
        try:
            recorder = _active[-1] if _active else None
            if recorder is None or not requires_grad:
                return original(self, requires_grad)
            return _as_own_work(_requires_grad_call, recorder, original, self, requires_grad)
        except BaseException as error:
            hide_our_frames(error)
            raise

    return _dress(requires_grad_, original)


def _requires_grad_call(recorder, original, self, requires_grad):
    if not self.is_leaf:
        return call_from(sys._getframe(1), original, (self, requires_grad), {})
    return recorder.call_factory(original, (self, requires_grad), {})


def _alias_wrapper(method_name: str):
    def make(original):
        def alias(*args, **kwargs):
            try:
                recorder = _active[-1] if _active else None
                if recorder is None:
                    return original(*args, **kwargs)
                if args and _plain(args[0]):
                    return getattr(recorder, method_name)(original, args, kwargs)
                return _as_own_work(getattr(recorder, method_name), original, args, kwargs)
            except BaseException as error:
                hide_our_frames(error)
                raise

        return _dress(alias, original)

    return make


def _hooks_suspending_wrapper(original):
    """`torch.func.grad`/`vjp`/`jacrev`/`hessian` refuse to run while any saved-tensor
    hooks are installed (they disable the feature for their duration). Step our hooks
    aside for that time, so the user's program runs as it does without the doctor."""

    @contextlib.contextmanager
    def disable_saved_tensors_hooks(error_message):
        recorder = _active[-1] if _active else None
        suspended = recorder is not None and recorder.listener.suspend_saves()
        try:
            with original(error_message):
                yield
        finally:
            if suspended:
                recorder.listener.resume_saves()

    return _dress(disable_saved_tensors_hooks, original)


def _view_wrapper(original):
    """Views are made all the time in a forward pass; only views of tensors without grad
    can go stale unnoticed, so the others skip the recorder entirely. While `torch.jit.trace`
    runs, every view skips it: the tracer records each op's Python line and names its result
    from the frames above it, then checks that a second trace (inputs without grad) records the
    same graph; both are made from a stand-in of the caller's frame, as the recorder's are."""

    def make_view(self, *args, **kwargs):
        try:
            recorder = _active[-1] if _active else None
            if recorder is None:
                return original(self, *args, **kwargs)
            if _plain(self):
                return _view_call(recorder, sys._getframe(1), original, self, args, kwargs)
            return _as_own_work(_view_call, recorder, sys._getframe(1), original, self, args, kwargs)
        except BaseException as error:
            hide_our_frames(error)
            raise

    return _dress(make_view, original)


def _view_call(recorder, caller, original, self, args, kwargs):
    if self.requires_grad or torch.jit.is_tracing():
        return call_from(caller, original, (self, *args), kwargs)
    return recorder.call_view(original, (self, *args), kwargs)


def _dress(wrapper, original):
    try:
        functools.update_wrapper(wrapper, original)
    except (AttributeError, TypeError):
        pass
    wrapper.__autograd_doctor_wrapped__ = original
    return wrapper


# What `_targets` found, by `views`: (fingerprint, targets, the originals it classified). The scan
# reads every attribute of torch.Tensor, torch, torch._C._nn and torch._VF (about 9,000 getattr
# calls, a few milliseconds): done once per process, not at every watch() (every test under the
# pytest plugin starts one). It is done again when an owner gained or lost attributes (the
# fingerprint: the sizes of their dicts) or an attribute it classified was replaced.
_targets_cache: dict[bool, tuple[tuple, list, list]] = {}
# The wrapper made for (owner, name), with the original it wraps: the same original gets the
# same wrapper at the next watch() (the wrappers keep no state of a watch: they read `_active`).
_wrappers: dict[tuple[object, str], tuple[object, object]] = {}


def _owners_fingerprint() -> tuple:
    owners = [*torch.Tensor.__mro__, torch]
    for path in ("torch._C._nn", "torch._C._VariableFunctions"):
        owner = compat.lookup(path)
        if owner is not None:
            owners.extend(owner.__mro__ if isinstance(owner, type) else (owner,))
    return tuple(len(getattr(owner, "__dict__", ())) for owner in owners)


def _targets(views: bool):
    """`_scan_targets(views)`, kept while torch's namespaces stay as they were."""
    fingerprint = _owners_fingerprint()
    cached = _targets_cache.get(views)
    if cached is not None and cached[0] == fingerprint and all(
            _unwrapped(getattr(owner, name, None)) is original for owner, name, original in cached[2]):
        return cached[1]
    targets = _scan_targets(views)
    classified = [(owner, name, _unwrapped(getattr(owner, name, None))) for owner, name, _ in targets]
    _targets_cache[views] = (fingerprint, targets, classified)
    return targets


def _unwrapped(value):
    """The original under one of our wrappers (the scan may run while they are installed)."""
    original = getattr(value, "__autograd_doctor_wrapped__", None)
    return value if original is None else original


def _scan_targets(views: bool):
    """(owner, name, wrapper factory) for everything to wrap; the view-making methods
    only when `views` (full mode: they catch views kept across writes)."""
    targets = []
    for name in sorted(dir(torch.Tensor)):
        original = getattr(torch.Tensor, name, None)
        if original is None or not callable(original) or isinstance(original, type):
            continue
        if name == "requires_grad_":
            targets.append((torch.Tensor, name, _requires_grad_wrapper))
        elif name == "detach":
            targets.append((torch.Tensor, name, _alias_wrapper("call_detach")))
        elif name == "numpy":
            targets.append((torch.Tensor, name, _alias_wrapper("call_numpy")))
        elif name in VIEW_METHODS:
            if views:
                targets.append((torch.Tensor, name, _view_wrapper))
        elif name == "backward":
            targets.append((torch.Tensor, name, _tensor_backward_wrapper))
        elif name in INPLACE_DUNDERS or (name.endswith("_") and not name.endswith("__")):
            kind = classify_call(original) if name not in INPLACE_DUNDERS else WRITES_FIRST_ARG
            if kind == NOT_WRITE:
                kind = WRITES_FIRST_ARG if name in INPLACE_DUNDERS else NOT_WRITE
            if kind != NOT_WRITE:
                op = f"Tensor.{name}"
                targets.append((torch.Tensor, name, lambda f, op=op, kind=kind, site=(torch.Tensor, name):
                                _write_wrapper(f, op, kind, site)))
    function_owners = [(torch, "torch")]
    nn_functions = compat.lookup("torch._C._nn")
    if nn_functions is not None:
        function_owners.append((nn_functions, "torch._C._nn"))
    variable_functions = compat.lookup("torch._VF")
    # torch._VF resolves names lazily (__getattr__), so dir() does not list them: this does.
    variable_function_names = compat.lookup("torch._C._VariableFunctions")
    if variable_functions is not None and variable_function_names is not None:
        function_owners.append((variable_functions, "torch._VF"))
    for owner, label in function_owners:
        names = dir(variable_function_names) if label == "torch._VF" else dir(owner)
        for name in sorted(names):
            if not name.endswith("_") or name.endswith("__") or name.startswith("__"):
                continue
            original = getattr(owner, name, None)
            if original is None or not callable(original) or isinstance(original, type):
                continue
            kind = classify_call(original)
            if kind == NOT_WRITE and name.startswith("_foreach_"):
                kind = WRITES_FOREACH_LIST
            if kind in (WRITES_FIRST_ARG, WRITES_FOREACH_LIST):
                op = f"{label}.{name}"
                if label == "torch._VF":
                    op = f"torch.{name}"
                targets.append((owner, name, lambda f, op=op, kind=kind, site=(owner, name):
                                _write_wrapper(f, op, kind, site)))
    if _has_callable(torch.autograd, "backward"):
        targets.append((torch.autograd, "backward", _backward_wrapper))
        targets.append((torch.autograd, "grad", _backward_wrapper))
    for name in FACTORIES:
        if name in ("tensor", "as_tensor"):
            targets.append((torch, name, _alias_wrapper("call_tensor_copy")))
        elif hasattr(torch, name):
            targets.append((torch, name, _factory_wrapper))
    targets.append((copy, "deepcopy", _alias_wrapper("call_deepcopy")))
    targets.append((copy, "copy", _alias_wrapper("call_shallow_copy")))
    distributed = compat.lookup("torch.distributed")
    if distributed is not None and getattr(distributed, "is_available", lambda: False)() \
            and _has_callable(distributed, "all_gather"):
        targets.append((distributed, "all_gather", _alias_wrapper("call_all_gather")))
    if _has_callable(torch.autograd.graph, "disable_saved_tensors_hooks"):
        targets.append((torch.autograd.graph, "disable_saved_tensors_hooks", _hooks_suspending_wrapper))
    return targets


def _has_callable(owner, name: str) -> bool:
    return callable(getattr(owner, name, None))


def activate(recorder: Recorder) -> None:
    """Make `recorder` receive writes; wraps torch on the first activation (the view
    methods too once a full-mode recorder is active)."""
    global _views_wrapped
    with _lock:
        if not _active:
            _wrap_all(views=not recorder.light)
            _views_wrapped = not recorder.light
        elif not recorder.light and not _views_wrapped:
            _wrap_all(views=True)
            _views_wrapped = True
        _active.append(recorder)
        recorder.on_quiet_step_change = _quiet_step_changed


def deactivate(recorder: Recorder) -> None:
    with _lock:
        for index in range(len(_active) - 1, -1, -1):
            if _active[index] is recorder:
                del _active[index]
                break
        recorder.on_quiet_step_change = None
        if not _active:
            _unwrap_all()
        else:
            _wrap_quiet_sites_again()  # a quiet step of the recorder that stops: not the next one's


_MISSING = object()
_views_wrapped = False
_script_builtin_ids: list[int] = []  # wrappers entered in TorchScript's table of builtins


def _wrap_all(views: bool) -> None:
    get_table = compat.lookup("torch.jit._builtins._get_builtin_table")
    table = get_table() if get_table is not None else None
    for owner, name, make_wrapper in _targets(views):
        current = getattr(owner, name)
        if getattr(current, "__autograd_doctor_wrapped__", None) is not None:
            continue
        # For classes, remember whether the attribute was the class's own or inherited,
        # so that unwrapping restores the class dict exactly.
        own = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else current
        made = _wrappers.get((owner, name))
        if made is not None and made[0] is current:
            wrapper = made[1]
        else:
            wrapper = make_wrapper(current)
            _wrappers[(owner, name)] = (current, wrapper)
        try:
            setattr(owner, name, wrapper)
        except (AttributeError, TypeError):
            continue
        _saved_originals.append((owner, name, own))
        _installed[(owner, name)] = (own, wrapper)
        if table is not None:
            _share_script_builtin(wrapper, current, table)


def _share_script_builtin(wrapper, original, table: dict) -> None:
    """TorchScript compiles a call to `torch.ones_like` (or `torch.relu_`, ...) as its aten op
    when it finds the function's id in its table of builtins, filled from torch's namespace when
    torch was imported; the wrapper has another id, and `torch.jit.script` of the user's code
    would try to compile it as Python and fail. The wrapper gets the original's entry while it
    is installed (and loses it when unwrapped: a freed wrapper's id may be reused)."""
    op = table.get(id(original))
    if op is not None:
        table[id(wrapper)] = op
        _script_builtin_ids.append(id(wrapper))


def _unwrap_all() -> None:
    get_table = compat.lookup("torch.jit._builtins._get_builtin_table")
    table = get_table() if get_table is not None else {}
    while _script_builtin_ids:
        table.pop(_script_builtin_ids.pop(), None)
    _unwrapped_for_step.clear()  # torch's own are put back below anyway
    _installed.clear()
    while _saved_originals:
        _put_back(*_saved_originals.pop())


def _put_back(owner, name: str, own) -> bool:
    """Give `owner` back its own `name` (delete it where the class only inherited it); False
    where the owner refuses."""
    try:
        if own is _MISSING:
            delattr(owner, name)
        else:
            setattr(owner, name, own)
    except (AttributeError, TypeError):
        return False
    return True


# ---- quiet optimizer steps ----------------------------------------------------------------
# In a quiet step the write wrappers only pass each call on, under a stand-in frame that keeps
# torch's warnings on the optimizer's line: about 5,000 instructions a write, and AdamW writes six
# times per parameter (a quarter of a millisecond per step on a 29-parameter model). So the
# methods a quiet step wrote through are remembered, torch's own are put back for the time of
# every later quiet step, and the wrappers come back when it ends. The step writes exactly as
# before; it is only not passed through a function of ours.
_installed: dict[tuple[object, str], tuple[object, object]] = {}  # (owner, name) -> (own, wrapper)
_quiet_sites: dict[tuple[object, str], None] = {}  # the (owner, name) quiet steps wrote through
_unwrapped_for_step: list[tuple[object, str, object, object]] = []  # (owner, name, own, wrapper)


def _quiet_step_changed(recorder: Recorder, quiet: bool) -> None:
    with _lock:
        if not quiet:
            _wrap_quiet_sites_again()
        elif _active and _active[-1] is recorder:
            _unwrap_quiet_sites()


def _unwrap_quiet_sites() -> None:
    # At every quiet step: `_attribute` and `_put_back` written out (a call less per site).
    for site in _quiet_sites:
        own, wrapper = _installed.get(site, (None, None))
        owner, name = site
        if wrapper is None or (owner.__dict__.get(name, _MISSING) if isinstance(owner, type)
                               else getattr(owner, name, _MISSING)) is not wrapper:
            continue  # not ours now: somebody else's patch stays as it is
        try:
            if own is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
        except (AttributeError, TypeError):
            continue
        _unwrapped_for_step.append((owner, name, own, wrapper))


def _wrap_quiet_sites_again() -> None:
    while _unwrapped_for_step:
        owner, name, own, wrapper = _unwrapped_for_step.pop()
        current = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name, _MISSING)
        if current is own:  # torch's own, or none for an inherited one: not patched meanwhile
            try:
                setattr(owner, name, wrapper)
            except (AttributeError, TypeError):
                pass


def _attribute(owner, name: str):
    """What the owner itself holds under `name` (a class's own dict, not an inherited one)."""
    if isinstance(owner, type):
        return owner.__dict__.get(name, _MISSING)
    return getattr(owner, name, _MISSING)


__all__ = ["activate", "deactivate"]
