"""Remember the user's `optimizer.zero_grad()` calls that throw gradients away.

`zero_grad()` clears the gradients a backward() left on the optimizer's parameters; `step()` is
what applies them. An optimizer whose `zero_grad()` runs every iteration while its `step()` is
never called (forgotten after `loss_d.backward()`) trains nothing, and nothing fails. While a
doctor runs, `torch.optim.Optimizer.zero_grad` is wrapped: for a call on parameters that hold
gradients (non-zero ones, for `set_to_none=False`), the log keeps the optimizer (weakly), where
the call was made, and where the first backward() since the optimizer's previous `zero_grad()`
was called (the one whose gradients are thrown away). The optimizer step hooks
(optimizer_steps.py) note which optimizers ever stepped; analysis/never_stepped.py reads both
when the doctor stops (AD221). Only weak references are kept.

For an optimizer that does step, the log also counts, per backward() call site (its user stack),
how often the gradients that site computed were applied by a `step()` and how often a
`zero_grad()` cleared them before any step: a `zero_grad()` at every micro-batch of a
gradient-accumulation window throws away all but the last micro-batch's gradients
(analysis/cleared_before_step.py, AD153). `model.zero_grad()` clears the same gradients: it is
counted as a clear of the optimizers over the model's parameters that its caller holds.
"""

from __future__ import annotations

import functools
import itertools
import operator
import sys
import weakref
from dataclasses import dataclass, field

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack, frame_locals
from autograd_doctor.recording.identity import IdentitySet
from autograd_doctor.recording.own_frames import call_as_caller, own_work_done, own_work_started
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

# Parameters whose gradients are looked at per call (the smallest of the first few: cheap).
SAMPLED_PARAMETERS = 8
# Optimizers followed per recorder.
MAX_OPTIMIZERS = 16
# backward() call sites counted per optimizer (AD153).
MAX_BACKWARD_SITES = 8
# Parameters looked at, at a clear of unapplied gradients, for those that hold one (AD312).
MAX_LOST_LOOKED_AT = 256
# Frames looked at for the optimizer's own step() around a zero_grad() call.
MAX_STACK_DEPTH = 32


@dataclass
class ThrownAway:
    """One zero_grad() call that cleared gradients: where it was called, and the backward() whose
    gradients it threw away (the first one since the optimizer's previous zero_grad())."""

    clear_site: Site | None
    backward_site: Site | None


@dataclass
class ClearedUnapplied:
    """The gradients one backward() call site computed, cleared by a zero_grad() before any step():
    how often, where the first such zero_grad() was called, and the backward() itself."""

    count: int
    clear_site: Site | None
    backward_site: Site | None
    # For a model's zero_grad(): how the caller names the optimizer (`optimizer`, `self.opt`),
    # and the wrappers of it that gate their own step() and zero_grad() (`self.accumulator`):
    # AD153's help moves the clear under a step of one of them, or clears through the wrapper.
    caller_names: tuple = ()
    gating_wrappers: tuple = ()


@dataclass
class OptimizerClears:
    optimizer_ref: weakref.ref
    last_clear_seq: int = 0
    thrown_away: list = field(default_factory=list)  # ThrownAway, oldest first (the first few)
    last_step_seq: int = 0
    # Inside step(): a closure's zero_grad() (L-BFGS evaluates it several times per step) clears
    # what the step itself is using, not gradients a step failed to apply.
    stepping: bool = False
    # Per backward() call site (its user stack): how often a step() applied what it computed,
    # and what a zero_grad() cleared before any step() did (ClearedUnapplied).
    applied: dict = field(default_factory=dict)
    cleared_unapplied: dict = field(default_factory=dict)
    # The smallest sampled parameter and its `.grad` right after the newest backward(), weakly
    # (the gradient None when it had none): a step that finds another tensor in that `.grad`
    # applies what the program put there itself (`p.grad = averaged` in federated averaging or
    # per-sample clipping), not what the backward() sites computed (AD153).
    after_backward: tuple | None = None
    # AD312: at a clear of unapplied gradients, the backward() sites and (weakly) the parameters
    # that held non-zero gradients; at the next step, whether those parameters got a gradient again.
    # Per site: how many steps found them still without one, and the sites they did get one again for.
    lost_pending: tuple | None = None
    lost: dict = field(default_factory=dict)
    refilled: set = field(default_factory=set)
    # id of a parameter -> (its `.grad`, weakly, and that gradient's version) at the newest step, taken
    # once a clear of unapplied gradients was seen: a gradient still there unchanged was applied.
    at_step: dict = field(default_factory=dict)


@dataclass
class PartialClear:
    """A `model.zero_grad()` that left gradients on parameters the optimizer also steps, outside
    the model (AD229): where it was called, how the caller names the optimizer, and the first few
    of those parameters with their `.grad` and its version then (weakly)."""

    optimizer_ref: weakref.ref
    seq: int
    site: Site | None
    module_class: str
    caller_names: tuple
    samples: list  # (weak parameter, weak gradient, version)
    outside: int  # how many of the optimizer's parameters hold a gradient outside the model


class OptimizerClearLog:
    """Per recorder: the optimizers whose zero_grad() threw gradients away, and the optimizers
    that stepped (by identity: an optimizer made anew each epoch takes a freed one's id)."""

    def __init__(self):
        # id of an optimizer -> its newest PartialClear since its last step (AD229).
        self.partial_clears: dict[int, PartialClear] = {}
        self.by_optimizer: dict[int, OptimizerClears] = {}
        self.stepped = IdentitySet()
        # The parameters of the optimizers that stepped, taken at their first step: an
        # optimizer that only clears may leave the stepping to another one over the same
        # parameters (SAM wraps a base optimizer built on its own param_groups).
        self.stepped_parameters = IdentitySet()

    def step_started(self, optimizer) -> None:
        entry = self._entry(optimizer)
        if entry is not None:
            entry.stepping = True
            if entry.lost_pending is not None:
                keys, parameter_refs = entry.lost_pending
                entry.lost_pending = None
                parameters = [ref() for ref in parameter_refs]
                if parameters and all(p is not None and _without_gradient(p) for p in parameters):
                    for key in keys:
                        entry.lost[key] = entry.lost.get(key, 0) + 1
                else:
                    entry.refilled.update(keys)
            if entry.cleared_unapplied:
                entry.at_step = _gradients_now(optimizer)

    def step_done(self, optimizer, seq: int = 0, backward_calls=()) -> None:
        entry = self._entry(optimizer)
        if entry is not None:
            entry.stepping = False
        if entry is not None and seq:
            if not _gradient_put_by_the_program(entry):
                for key in _call_sites_since(backward_calls, max(entry.last_clear_seq, entry.last_step_seq), seq):
                    if key in entry.applied or len(entry.applied) < MAX_BACKWARD_SITES:
                        entry.applied[key] = entry.applied.get(key, 0) + 1
            entry.last_step_seq = seq
        if optimizer in self.stepped:
            return
        self.stepped.add(optimizer)
        self.stepped_parameters.update(p for group in optimizer.param_groups for p in group.get("params", ()))

    def backward_done(self) -> None:
        """After a backward(): note each followed optimizer's sampled `.grad` (see `after_backward`)."""
        for entry in self.by_optimizer.values():
            optimizer = entry.optimizer_ref()
            parameter = _sampled_parameter(optimizer) if optimizer is not None else None
            if parameter is None:
                entry.after_backward = None
                continue
            gradient = parameter.grad
            entry.after_backward = (weakref.ref(parameter), weakref.ref(gradient) if gradient is not None else None)

    def partially_cleared(self, optimizer, module, seq: int, names: tuple) -> None:
        """`module.zero_grad()` ran, `optimizer` holds the module's parameters: note the optimizer's
        other parameters that still hold (non-zero) gradients, which that call leaves in place."""
        if len(self.partial_clears) >= MAX_OPTIMIZERS and id(optimizer) not in self.partial_clears:
            return
        inside = {id(p) for p in module.parameters()}
        samples, outside = [], 0
        for group in optimizer.param_groups:
            for parameter in group.get("params", ()):
                if id(parameter) in inside:
                    continue
                gradient = parameter.grad if isinstance(parameter, torch.Tensor) and parameter.is_leaf else None
                if gradient is None or gradient.layout is not torch.strided or not gradient.detach().view(-1)[:16].any():
                    continue
                outside += 1
                if len(samples) < 4:
                    samples.append((weakref.ref(parameter), weakref.ref(gradient), gradient._version))
        if not samples:
            self.partial_clears.pop(id(optimizer), None)
            return
        stack = capture_user_stack(1, limit=1)
        self.partial_clears[id(optimizer)] = PartialClear(weakref.ref(optimizer), seq, stack[0] if stack else None,
                                                          type(module).__name__, names, samples, outside)

    def partial_clear_at_step(self, optimizer) -> PartialClear | None:
        """Before step(): the partial clear since the optimizer's previous step, when the gradients
        it left were still there and a backward() added to them; forgets it either way."""
        found = self.partial_clears.pop(id(optimizer), None)
        if found is None or found.optimizer_ref() is not optimizer:
            return None
        for parameter_ref, gradient_ref, version in found.samples:
            parameter, gradient = parameter_ref(), gradient_ref()
            if parameter is None or gradient is None or parameter.grad is not gradient:
                return None  # replaced or set to None since: cleared another way
            if gradient._version == version or not gradient.detach().view(-1)[:16].any():
                return None  # nothing added since, or zeroed in place: not this problem
        return found

    def _entry(self, optimizer) -> OptimizerClears | None:
        entry = self.by_optimizer.get(id(optimizer))
        if entry is None or entry.optimizer_ref() is not optimizer:
            if len(self.by_optimizer) >= MAX_OPTIMIZERS:
                # Room goes to live optimizers first: else whether a later one is followed would
                # depend on whether it happens to take a dead one's address (and its entry).
                self.by_optimizer = {key: known for key, known in self.by_optimizer.items()
                                     if known.optimizer_ref() is not None}
            if len(self.by_optimizer) >= MAX_OPTIMIZERS:
                return None
            entry = self.by_optimizer[id(optimizer)] = OptimizerClears(weakref.ref(optimizer))
        return entry

    def cleared(self, optimizer, seq: int, backward_calls, by_module: bool = False,
                caller_names: tuple = (), gating_wrappers: tuple = ()) -> None:
        entry = self._entry(optimizer)
        if entry is None:
            return
        previous, entry.last_clear_seq = entry.last_clear_seq, seq
        # Before its first step too: whether the optimizer steps at all is judged when the doctor stops.
        if not entry.stepping and not _inside_step(optimizer):
            self._note_cleared_unapplied(entry, optimizer, max(previous, entry.last_step_seq), seq, backward_calls,
                                         caller_names, gating_wrappers)
        # A model's zero_grad() says nothing of whether this optimizer is the one meant to step
        # (another one over the same parameters may be): only the optimizer's own call counts for AD221.
        if by_module or optimizer in self.stepped or len(entry.thrown_away) >= 4 or not _holds_gradients(optimizer):
            return
        since = [call for call in backward_calls if previous < call.seq < seq]
        stack = capture_user_stack(2, limit=1)
        entry.thrown_away.append(ThrownAway(stack[0] if stack else None, since[0].site if since else None))


    def _note_cleared_unapplied(self, entry, optimizer, since_seq: int, seq: int, backward_calls,
                                caller_names: tuple = (), gating_wrappers: tuple = ()) -> None:
        """An optimizer that steps clears gradients: note the backward() sites whose gradients no
        step() applied since they were computed (none when the gradients are already zero)."""
        keys = _call_sites_since(backward_calls, since_seq, seq)
        if not keys or not _holds_gradients(optimizer):
            return
        entry.lost_pending = _holding_parameters(optimizer, keys, entry.at_step)
        clear_stack = None
        for key in keys:
            known = entry.cleared_unapplied.get(key)
            if known is not None:
                known.count += 1
                continue
            if len(entry.cleared_unapplied) >= MAX_BACKWARD_SITES:
                continue
            if clear_stack is None:
                clear_stack = capture_user_stack(3, limit=1)
            entry.cleared_unapplied[key] = ClearedUnapplied(1, clear_stack[0] if clear_stack else None, key[0],
                                                            caller_names, gating_wrappers)


def _inside_step(optimizer) -> bool:
    """Whether this zero_grad() runs inside the optimizer's own step() (a closure's), seen on the
    call stack: the step hooks alone miss a step entered while they were not registered."""
    frame = sys._getframe(2)
    for _ in range(MAX_STACK_DEPTH):
        if frame is None:
            return False
        code = frame.f_code
        # (`f_locals` copies the frame's variables: read only where one can be named `self`; a
        # function's variables are its code's names, a class body's or a module's any name)
        if code.co_name == "step" and (not code.co_flags & _CO_OPTIMIZED or "self" in code.co_varnames
                                       or "self" in code.co_cellvars or "self" in code.co_freevars) \
                and frame.f_locals.get("self") is optimizer:
            return True
        frame = frame.f_back
    return False


def _call_sites_since(backward_calls, since_seq: int, seq: int) -> list:
    """The user stacks of the backward() calls made between two events, each once, oldest first."""
    keys = []
    for call in backward_calls:
        if since_seq < call.seq < seq and call.stack and call.stack not in keys:
            keys.append(call.stack)
    return keys


_CO_OPTIMIZED = 0x0001  # a function's frame (inspect.CO_OPTIMIZED)
_numel = operator.methodcaller("numel")  # (a call into C per parameter, not a Python lambda)


def _sampled_parameter(optimizer):
    """The smallest of the optimizer's first few parameters (None when it has none)."""
    parameters = list(itertools.islice((p for group in optimizer.param_groups for p in group.get("params", ())),
                                       SAMPLED_PARAMETERS))
    return min(parameters, key=_numel) if parameters else None


def _gradients_now(optimizer) -> dict:
    """id of each of the optimizer's first few hundred parameters -> (its gradient, weakly, and
    that gradient's version), for those that have one."""
    found = {}
    for parameter in itertools.islice((p for group in optimizer.param_groups for p in group.get("params", ())),
                                      MAX_LOST_LOOKED_AT):
        gradient = parameter.grad if isinstance(parameter, torch.Tensor) and parameter.is_leaf else None
        if gradient is not None:
            found[id(parameter)] = (weakref.ref(gradient), gradient._version)
    return found


def _holding_parameters(optimizer, keys: list, at_step: dict) -> tuple | None:
    """(the sites, weak references to the first few of the optimizer's parameters that hold a
    non-zero gradient now that the newest step did not find there unchanged), or None when none
    does (looked at among the first few hundred)."""
    held = []
    for parameter in itertools.islice((p for group in optimizer.param_groups for p in group.get("params", ())),
                                      MAX_LOST_LOOKED_AT):
        if not isinstance(parameter, torch.Tensor) or not parameter.is_leaf or _without_gradient(parameter):
            continue
        seen = at_step.get(id(parameter))
        if seen is not None and seen[0]() is parameter.grad and seen[1] == parameter.grad._version:
            continue  # the step applied it: not what the cleared backward() calls computed
        held.append(weakref.ref(parameter))
        if len(held) >= SAMPLED_PARAMETERS:
            break
    return (tuple(keys), held) if held else None


def _without_gradient(parameter) -> bool:
    """No gradient, or an all-zero one (a dense one: a sparse gradient counts as one)."""
    gradient = parameter.grad
    if gradient is None:
        return True
    return gradient.layout is torch.strided and not bool(gradient.detach().any())


def _holds_gradients(optimizer) -> bool:
    """Whether the smallest of the optimizer's first few parameters holds a non-zero gradient."""
    smallest = _sampled_parameter(optimizer)
    gradient = smallest.grad if smallest is not None else None
    return gradient is not None and bool(gradient.detach().any())


def _gradient_put_by_the_program(entry: OptimizerClears) -> bool:
    """Whether the sampled parameter's `.grad`, at this step, is another tensor than the newest
    backward() left there: the program assigned it after that backward(). Unknown (no backward()
    seen since the optimizer was followed): False, as before."""
    if entry.after_backward is None:
        return False
    parameter_ref, gradient_ref = entry.after_backward
    parameter = parameter_ref()
    if parameter is None:
        return False
    gradient = parameter.grad
    if gradient_ref is None:
        return gradient is not None
    return gradient is not gradient_ref()


def _recording(original):
    @functools.wraps(original)
    def zero_grad(self, *args, **kwargs):
        started = own_work_started()  # a Tensor subclass's __torch_function__ does not see our reads
        try:
            for recorder in list(_wrapped.recorders):
                recorder.optimizer_clears.cleared(self, next(recorder.seq), recorder.backward_calls)
        except Exception:
            pass
        finally:
            own_work_done(started)
        return call_as_caller(original, (self, *args), kwargs)
    return marked(zero_grad, original)


def _optimizers_around(module, frame) -> list:
    """The optimizers over `module`'s parameters that the caller of `module.zero_grad()` can reach,
    each with how the caller names it and the wrappers of it that gate their own step() and
    zero_grad() (`_gating_wrapper`): its local and global values, their attributes
    (`self.optimizer`), and what wraps an optimizer (accelerate's AcceleratedOptimizer keeps it as
    `.optimizer`). Only these are looked at: the recording keeps no list of optimizers."""
    first = next(module.parameters(), None)
    if first is None or frame is None:
        return []
    local_values = frame_locals(frame)
    candidates = list(local_values.items()) + list(frame.f_globals.items())
    owner = local_values.get("self")
    if owner is not None and isinstance(getattr(owner, "__dict__", None), dict):
        candidates += [(f"self.{name}", value) for name, value in owner.__dict__.items()]
    found: dict[int, tuple] = {}  # id -> (optimizer, its names, the names of its gating wrappers)
    for name, value in candidates:
        if isinstance(value, torch.Tensor):
            continue
        # An instance attribute only: a property could run the user's code.
        wrapped = value.__dict__.get("optimizer") if isinstance(getattr(value, "__dict__", None), dict) else None
        for optimizer in (value, wrapped):
            if not isinstance(optimizer, torch.optim.Optimizer):
                continue
            if id(optimizer) not in found:
                if not any(p is first for group in optimizer.param_groups for p in group.get("params", ())):
                    continue
                found[id(optimizer)] = (optimizer, (), ())
            known, names, wrappers = found[id(optimizer)]
            if not name.replace(".", "").isidentifier():
                continue
            if optimizer is value:
                found[id(optimizer)] = (known, names + (name,), wrappers)
            elif _gating_wrapper(value):
                found[id(optimizer)] = (known, names, wrappers + (name,))
    return list(found.values())


def _gating_wrapper(value) -> bool:
    """Whether `value`, which keeps an optimizer as `.optimizer`, is not an optimizer itself and
    its class defines both step() and zero_grad(): a wrapper that decides when they act
    (accelerate's AcceleratedOptimizer under `accumulate()`)."""
    if isinstance(value, torch.optim.Optimizer):
        return False
    own = {name for cls in type(value).__mro__ if cls is not object for name in vars(cls)}
    return {"step", "zero_grad"} <= own


def _module_recording(original):
    """`model.zero_grad()` clears the same gradients as the optimizer's: noted as a clear of each
    optimizer over the module's parameters that the caller holds (AD153 counts both)."""
    @functools.wraps(original)
    def zero_grad(self, *args, **kwargs):
        if _wrapped.recorders:
            started = own_work_started()
            try:
                for optimizer, names, gating_wrappers in _optimizers_around(self, sys._getframe(1)):
                    for recorder in list(_wrapped.recorders):
                        recorder.optimizer_clears.cleared(optimizer, next(recorder.seq), recorder.backward_calls,
                                                          by_module=True, caller_names=names,
                                                          gating_wrappers=gating_wrappers)
                        if names and not gating_wrappers:
                            recorder.optimizer_clears.partially_cleared(optimizer, self, next(recorder.seq), names)
            except Exception:
                pass
            finally:
                own_work_done(started)
        return call_as_caller(original, (self, *args), kwargs)
    return marked(zero_grad, original)


_wrapped = WrappedAttributes(lambda: [(torch.optim.Optimizer, "zero_grad", _recording),
                                      (torch.nn.Module, "zero_grad", _module_recording)])

# Record `optimizer.zero_grad()` calls into a recorder's `optimizer_clears` until
# `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
