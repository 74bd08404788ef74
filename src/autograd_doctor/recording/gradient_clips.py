"""Remember the user's gradient clipping calls (`clip_grad_norm_`, `clip_grad_value_`).

Clipping changes what `.grad` holds at that moment. It changes the update only between the
backward() that filled the gradients and the step() that applies them: called before backward()
(after zero_grad(), on gradients that are None), or after step(), it clips gradients no step
uses, and nothing fails. For each call the log keeps where it was made, its place in the
recorder's sequence of events, and, for a few of its parameters, which gradient tensor (weakly)
and which version it left; the doctor compares them with what the optimizer's parameters hold
when step() runs (analysis/clip_order.py).

`torch.nn.utils.clip_grad_norm_` and `clip_grad_value_` are wrapped in `torch.nn.utils` and
`torch.nn.utils.clip_grad` while a doctor runs (`from torch.nn.utils import clip_grad_norm_`
made before the doctor started keeps the plain function). Only weak references are kept.
"""

from __future__ import annotations

import collections
import functools
import operator
import types
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import Site, capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.identity import IdentityMap
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

# Parameters of a call whose gradients are remembered; clips remembered per recorder.
SAMPLED_PARAMETERS = 4
LOG_SIZE = 8
# Parameters of a call remembered (weakly) to tell which optimizers' parameters it clipped.
MAX_PARAMETERS = 1024
# Calls recorded per recorder: the order is the same in every iteration of a training loop.
MAX_RECORDED = 32
NAMES = ("clip_grad_norm_", "clip_grad_value_")


@dataclass
class GradientClip:
    """One clipping call: where, when (the recorder's sequence number), and for a few of its
    parameters (weakly) the gradient tensor it left and that tensor's version (None, None when
    the parameter had no gradient)."""

    function: str
    stack: tuple[Site, ...]
    seq: int
    samples: list  # (weak parameter, weak gradient or None, version or None)
    # Given an iterator (a `model.parameters()` generator) that yielded nothing: one that an
    # earlier loop had already read to the end, so the call clipped nothing.
    exhausted: bool = False
    # Judged when the next backward() starts: True when that backward() adds to the very
    # gradients this call clipped (the same tensors, unwritten since: not cleared in between),
    # False when it does not, None until a backward() comes.
    accumulated_onto: bool | None = None
    # Whether a sampled gradient held a non-zero value at the call (zeros after
    # `zero_grad(set_to_none=False)` are not a partial sum).
    clipped_nonzero: bool = False
    # Weak references to all the parameters it was given (up to MAX_PARAMETERS): which optimizer's
    # parameters it clipped (AD177).
    parameters: tuple = ()

    @property
    def site(self) -> Site | None:
        return self.stack[0] if self.stack else None

    @property
    def had_gradients(self) -> bool:
        return any(gradient is not None for _parameter, gradient, _version in self.samples)


_numel = operator.methodcaller("numel")


class GradientClips:
    """The clipping calls a recorder saw, newest last, and where each optimizer last stepped."""

    def __init__(self):
        self.clips: collections.deque = collections.deque(maxlen=LOG_SIZE)
        self.recorded = 0
        self.last_step = IdentityMap()  # optimizer -> seq after its latest step()

    def remember(self, function: str, parameters: list, seq: int, exhausted: bool = False) -> None:
        if self.recorded >= MAX_RECORDED:
            return
        self.recorded += 1
        samples = []
        for parameter in parameters[:SAMPLED_PARAMETERS]:
            gradient = getattr(parameter, "grad", None)
            try:
                samples.append((weakref.ref(parameter), weakref.ref(gradient) if gradient is not None else None,
                                gradient._version if gradient is not None else None))
            except TypeError:
                continue
        nonzero = False
        gradients = [gradient_ref() if gradient_ref is not None else None for _p, gradient_ref, _v in samples]
        if all(type(gradient) is torch.Tensor and gradient.layout is torch.strided for gradient in gradients):
            # Whether any is nonzero does not depend on the order: the smallest first, so that a
            # bias's gradient spares the scan of an embedding's (every element of each is read).
            gradients.sort(key=_numel)
        for gradient in gradients:
            if gradient is not None and bool(gradient.detach().any()):
                nonzero = True
                break
        references = []
        for parameter in parameters[:MAX_PARAMETERS]:
            try:
                references.append(weakref.ref(parameter))
            except TypeError:
                continue
        self.clips.append(GradientClip(function, capture_user_stack(1, limit=2), seq, samples, exhausted,
                                       clipped_nonzero=nonzero, parameters=tuple(references)))

    def step_done(self, optimizer, seq: int) -> None:
        self.last_step[optimizer] = seq

    def backward_starting(self) -> None:
        """A backward() that adds into `.grad` is about to run: does it add to gradients a clipping
        call left? Only the calls not judged yet are looked at (the newest few)."""
        for clip in self.clips:
            if clip.accumulated_onto is None:
                clip.accumulated_onto = _gradients_intact(clip)


def _gradients_intact(clip: GradientClip) -> bool:
    """Whether every sampled parameter that had a gradient at the call still holds that very
    gradient tensor, at the version the call left (no zero_grad(), no `p.grad = None` since)."""
    seen = False
    for parameter_ref, gradient_ref, version in clip.samples:
        if gradient_ref is None:
            continue
        parameter, gradient = parameter_ref(), gradient_ref()
        if parameter is None or gradient is None or parameter.grad is not gradient or gradient._version != version:
            return False
        seen = True
    return seen


def _modules():
    import torch.nn.utils as utils
    import torch.nn.utils.clip_grad as clip_grad
    return utils, clip_grad


def _read_once(parameters) -> tuple:
    """(what to pass to torch, the parameters as a list or None to read them after the call):
    an iterator can be read once, so it is read here and torch gets the same kind of object
    (a generator stays a generator: torch warns about an empty one)."""
    if isinstance(parameters, torch.Tensor):
        return parameters, [parameters]
    if isinstance(parameters, types.GeneratorType):
        listed = list(parameters)
        return (p for p in listed), listed
    if iter(parameters) is parameters:
        listed = list(parameters)
        return listed, listed
    return parameters, None


def _is_iterator(parameters) -> bool:
    try:
        return iter(parameters) is parameters
    except TypeError:
        return False


def _recording(original, name: str):
    @functools.wraps(original)
    def clip(parameters, *args, **kwargs):
        was_iterator = not isinstance(parameters, torch.Tensor) and _is_iterator(parameters)
        parameters, listed = _read_once(parameters)
        result = call_as_caller(original, (parameters, *args), kwargs)
        try:
            listed = list(parameters) if listed is None else listed
            for recorder in list(_wrapped.recorders):
                recorder.gradient_clips.remember(name, listed, next(recorder.seq), was_iterator and not listed)
        except Exception:
            pass
        return result
    return marked(clip, original)


_wrapped = WrappedAttributes(lambda: [(module, name, functools.partial(_recording, name=name))
                                      for module in _modules() for name in NAMES])

# Record clipping calls into a recorder's `gradient_clips` until `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate
