"""Remember reentrant `torch.utils.checkpoint` calls that cannot give their function's parameters
a gradient.

The reentrant checkpoint (`use_reentrant=True`, `checkpoint_sequential`) runs its function under
no_grad and connects the result to the graph only through its tensor inputs. Called with grad
mode on, on inputs none of which requires grad (the data, frozen embeddings), its result has no
grad history, and the parameters inside the function get no gradient, while the rest of the
model trains. PyTorch only warns ("None of the inputs have requires_grad=True"), a warning
often filtered.

`CheckpointFunction.apply` is wrapped while a doctor runs (torch's `checkpoint()` looks it up on
the class at each call, so a `from torch.utils.checkpoint import checkpoint` made earlier goes
through it). A call is remembered only in that case: grad mode on, no tensor input requiring
grad, and a function that is a module (or a module's method, or a function closing over a
module) with parameters that require grad. Only the call's site and weak references to a few of
those parameters are kept; the analysis decides after the next backward() whether they got a
gradient (analysis/grad_off_blocks.py).

It also remembers a call made with `preserve_rng_state=False` whose function drew random numbers in
the forward (dropout in training mode): the CPU generator's state (and CUDA's, once initialized) is
compared before and after the call, for those calls only. Reentrant calls go through
`CheckpointFunction.apply`; `use_reentrant=False` calls through
`_checkpoint_without_reentrant_generator`, which `checkpoint()` also looks up at each call and
which is wrapped too (a call with preserve_rng_state=True gets torch's own generator back). Backward recomputes the
function with other random numbers, so the gradients belong to another forward than the one that
ran; nothing fails (analysis/grad_off_blocks.py reports it after the next backward()).
"""

from __future__ import annotations

import collections
import inspect
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor import compat
from autograd_doctor.recording.frames import Site, capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

SAMPLED_PARAMETERS = 4
LOG_SIZE = 8


@dataclass
class UnconnectedCheckpoint:
    """A reentrant checkpoint call whose result cannot carry its function's parameters' gradients."""

    stack: tuple[Site, ...]
    seq: int
    function: str  # the function's class or name, for the report
    parameters: list  # weak references to a few of its parameters that require grad
    modules: list = ()  # weak references to the modules whose parameters it uses

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None


def _modules_of(function) -> list:
    """The modules whose parameters `function` uses, as far as can be seen without calling it."""
    if isinstance(function, torch.nn.Module):
        return [function]
    owner = getattr(function, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        return [owner]
    cells = getattr(function, "__closure__", None) or ()
    names = getattr(getattr(function, "__code__", None), "co_freevars", ())
    values = {}
    for name, cell in zip(names, cells):
        try:
            values[name] = cell.cell_contents
        except ValueError:
            continue
    start, end, segment = values.get("start"), values.get("end"), values.get("functions")
    if isinstance(start, int) and isinstance(end, int) and isinstance(segment, (list, tuple)):
        values = {"functions": list(segment[start:end + 1])}  # checkpoint_sequential runs functions[start:end + 1]
    found = []
    for value in values.values():
        if isinstance(value, torch.nn.Module):
            found.append(value)
        elif isinstance(value, (list, tuple)) and len(value) <= 256:  # checkpoint_sequential's segment
            found.extend(item for item in value if isinstance(item, torch.nn.Module))
    return found


def _trainable_parameters(modules: list) -> list:
    found = []
    for module in modules:
        for parameter in module.parameters():
            if parameter.requires_grad:
                found.append(parameter)
                if len(found) >= SAMPLED_PARAMETERS:
                    return found
    return found


def _name_of(function) -> str:
    if isinstance(function, torch.nn.Module):
        return type(function).__name__
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or "the function"


def _remember(function, args: tuple) -> None:
    if not torch.is_grad_enabled():
        return  # evaluation: no gradient is expected
    if any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        return
    modules = _modules_of(function)
    parameters = _trainable_parameters(modules)
    if not parameters:
        return
    stack = capture_user_stack(2, limit=2)
    for recorder in list(_wrapped.recorders):
        log = recorder.state.setdefault("unconnected_checkpoints", collections.deque(maxlen=LOG_SIZE))
        log.append(UnconnectedCheckpoint(stack, next(recorder.seq), _name_of(function),
                                         [weakref.ref(p) for p in parameters], [weakref.ref(m) for m in modules]))


@dataclass
class UnreplayedRandomCheckpoint:
    """A reentrant checkpoint call with preserve_rng_state=False whose function drew random numbers."""

    stack: tuple[Site, ...]
    seq: int
    function: str
    reentrant: bool = True

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None


def _generator_states() -> list:
    states = [torch.random.get_rng_state()]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states.extend(torch.cuda.get_rng_state_all())
    return states


def _will_recompute(preserve_rng_state, args: tuple) -> bool:
    """Backward will run the function again, with whatever random numbers come then."""
    return preserve_rng_state is False and torch.is_grad_enabled() and \
        any(isinstance(a, torch.Tensor) and a.requires_grad for a in args)


def _remember_random(function, before: list, reentrant: bool = True) -> None:
    after = _generator_states()
    if len(after) == len(before) and all(torch.equal(a, b) for a, b in zip(before, after)):
        return  # the function drew no random number: the recomputation gives the same values
    stack = capture_user_stack(2, limit=2)
    for recorder in list(_wrapped.recorders):
        log = recorder.state.setdefault("unreplayed_random_checkpoints", collections.deque(maxlen=LOG_SIZE))
        log.append(UnreplayedRandomCheckpoint(stack, next(recorder.seq), _name_of(function), reentrant))


def _non_reentrant_will_recompute(function, preserve_rng_state, args: tuple) -> bool:
    """The non-reentrant checkpoint recomputes the function when backward unpacks what it saved:
    with gradients on, an input or a parameter of the function's modules requires grad."""
    if preserve_rng_state is not False or not torch.is_grad_enabled():
        return False
    return any(isinstance(a, torch.Tensor) and a.requires_grad for a in args) or \
        bool(_trainable_parameters(_modules_of(function) + _global_modules_of(function)))


def _global_modules_of(function) -> list:
    """The modules a plain function reads as globals (`def block(x): return denoiser(x)`)."""
    code, scope = getattr(function, "__code__", None), getattr(function, "__globals__", None)
    if code is None or not isinstance(scope, dict):
        return []
    return [value for name in code.co_names if isinstance(value := scope.get(name), torch.nn.Module)]


def _recording_generator(original):
    """torch.utils.checkpoint's `_checkpoint_without_reentrant_generator` (use_reentrant=False), which
    checkpoint() looks up at each call and runs around the forward (it yields once, while the
    function runs). Only a call with preserve_rng_state=False gets the states compared around its
    forward; any other call gets torch's own generator back, untouched."""
    def generator(function, preserve_rng_state=True, *rest, **kwargs):
        try:
            before = _generator_states() if _non_reentrant_will_recompute(
                function, preserve_rng_state, rest[4:]) else None
        except Exception:
            before = None
        if before is None:
            return original(function, preserve_rng_state, *rest, **kwargs)
        return _compared_around_forward(original(function, preserve_rng_state, *rest, **kwargs), function, before)
    return marked(generator, original)


def _compared_around_forward(inner, function, before: list):
    yield from inner  # torch's pre-forward logic, the forward (checkpoint() runs it at the yield), its end
    try:
        _remember_random(function, before, reentrant=False)
    except Exception:
        pass


def _recording_apply(original):
    """A classmethod that remembers the call, then runs `original` (the classmethod object)."""
    def apply(cls, function, preserve_rng_state, *args):
        try:
            _remember(function, args)
            before = _generator_states() if _will_recompute(preserve_rng_state, args) else None
        except Exception:
            before = None
        result = call_as_caller(original.__func__, (cls, function, preserve_rng_state, *args), {})
        if before is not None:
            try:
                _remember_random(function, before)
            except Exception:
                pass
        return result
    return marked(classmethod(apply), original)


def _targets() -> list:
    try:
        import torch.utils.checkpoint as checkpoint_module
        from torch.utils.checkpoint import CheckpointFunction
    except ImportError:
        return []
    targets = []
    if isinstance(inspect.getattr_static(CheckpointFunction, "apply", None), classmethod):
        targets.append((CheckpointFunction, "apply", _recording_apply))
    if inspect.isgeneratorfunction(compat.lookup("torch.utils.checkpoint._checkpoint_without_reentrant_generator")):
        targets.append((checkpoint_module, "_checkpoint_without_reentrant_generator", _recording_generator))
    return targets


_wrapped = WrappedAttributes(_targets)

# Record unconnected reentrant checkpoints into a recorder's `state` until `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
