"""Remember optimizer parameter groups built from an iterator that an earlier group had read to
the end.

`params = filter(lambda p: ..., model.parameters())` is an iterator: the first optimizer built
from it (`Adam([{"params": params, ...}, ...])`) reads it to the end, and an optimizer built again
from the same object (rebuilt every epoch to change the learning rate, a second optimizer over the
same parameters) gets an empty group. Those parameters keep getting gradients and are never
stepped again; nothing fails (torch refuses an empty optimizer, not an empty group).

`torch.optim.Optimizer.add_param_group`, which every optimizer's constructor calls once per group,
is wrapped while a doctor runs. For a group given an iterator (an object that is its own iterator:
a generator, `filter`, `map`), the log notes the iterator's id, its type and how many tensors it
yielded; a later group given the very object (the same id and type, still bound) that yields
nothing, after an earlier group got tensors from it, is a finding: where both constructions were
made, the optimizer's class and the group's index. A fresh iterator that matches nothing (a
no-decay group on a model without biases) is not one. No tensor and no iterator is kept: only ids,
type names and sites. analysis/spent_parameter_iterators.py makes the report when the doctor stops
(AD242).
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.recording.frames import capture_user_stack
from autograd_doctor.recording.own_frames import call_as_caller
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

# Iterators remembered per recorder (the newest), and findings kept.
MAX_ITERATORS = 64
MAX_FINDINGS = 8
# Optimizers followed from their construction (AD317), and the parameters looked at to find one
# with a gradient.
MAX_BUILT = 16
MAX_SAMPLED = 64


@dataclass(eq=False)
class Built:
    """An optimizer built while the doctor runs, followed until it steps or clears (AD317): one
    parameter with a gradient (weak references), and the backward() calls that added into that very
    `.grad` tensor (its version grew) while it was never replaced or set to None."""

    optimizer: object  # weak reference
    site: object  # Site of the construction
    parameter: object = None  # weak reference, once one has a gradient
    parameter_version: int = 0
    gradient: object = None  # weak reference to its .grad
    gradient_version: int = 0
    grew: int = 0  # backward() calls that added into the same .grad
    replaced: bool = False  # the .grad was set to None or to another tensor: cleared some way


@dataclass
class SpentGroup:
    """A parameter group that got nothing from an iterator an earlier group had read to the end."""

    optimizer_class: str
    group_index: int
    site: object  # Site of the construction whose group is empty
    earlier_site: object  # Site of the construction that read the iterator
    earlier_count: int  # how many tensors the earlier group got from it
    iterator_type: str


class OptimizerGroups:
    def __init__(self):
        self.read: dict[int, tuple] = {}  # id(iterator) -> (type name, tensors yielded, Site)
        self.findings: list[SpentGroup] = []
        self.built: list[Built] = []

    def optimizer_built(self, optimizer, stack: tuple) -> None:
        if len(self.built) < MAX_BUILT and stack:
            self.built.append(Built(weakref.ref(optimizer), stack[0]))

    def backward_done(self, clears) -> None:
        """After a backward(): for each followed optimizer that neither stepped nor cleared, whether
        this backward() added into the `.grad` it held before (a few attribute reads per optimizer)."""
        for entry in self.built:
            if entry.replaced:
                continue
            optimizer = entry.optimizer()
            if optimizer is None or optimizer in clears.stepped or id(optimizer) in clears.by_optimizer:
                entry.replaced = True  # stepped or cleared: not followed any more
                continue
            if entry.parameter is None:
                parameter = _with_gradient(optimizer)
                if parameter is not None:
                    entry.parameter, entry.parameter_version = weakref.ref(parameter), parameter._version
                    entry.gradient, entry.gradient_version = weakref.ref(parameter.grad), parameter.grad._version
                continue
            parameter = entry.parameter()
            gradient = parameter.grad if parameter is not None else None
            if gradient is None or gradient is not entry.gradient():
                entry.replaced = True
                continue
            if gradient._version > entry.gradient_version:
                entry.grew += 1
                entry.gradient_version = gradient._version

    def group_added(self, optimizer, iterator_id: int, type_name: str, count: int, stack: tuple) -> None:
        site = stack[0] if stack else None
        earlier = self.read.get(iterator_id)
        if count == 0:
            if earlier is not None and earlier[0] == type_name and earlier[1] > 0 and len(self.findings) < MAX_FINDINGS:
                groups = getattr(optimizer, "param_groups", ())
                self.findings.append(SpentGroup(type(optimizer).__name__, max(len(groups) - 1, 0), site, earlier[2],
                                                earlier[1], type_name))
            return
        if len(self.read) >= MAX_ITERATORS:
            self.read.pop(next(iter(self.read)))
        self.read[iterator_id] = (type_name, count, site)


def _with_gradient(optimizer):
    """A parameter of `optimizer` that holds a dense gradient (among its first few)."""
    count = 0
    for group in optimizer.param_groups:
        for parameter in group.get("params", ()):
            gradient = parameter.grad
            if gradient is not None and gradient.layout == torch.strided:
                return parameter
            count += 1
            if count >= MAX_SAMPLED:
                return None
    return None


def _is_iterator(value) -> bool:
    if isinstance(value, (torch.Tensor, list, tuple, set, dict)):
        return False
    try:
        return iter(value) is value
    except TypeError:
        return False


def _recording(original):
    @functools.wraps(original)
    def add_param_group(self, param_group, *args, **kwargs):
        source = param_group.get("params") if isinstance(param_group, dict) else None
        iterator = source is not None and _is_iterator(source)
        result = call_as_caller(original, (self, param_group, *args), kwargs)
        try:
            if len(getattr(self, "param_groups", ())) == 1:  # its first group: the construction
                stack = capture_user_stack(1, limit=1)
                for recorder in list(_wrapped.recorders):
                    recorder.optimizer_groups.optimizer_built(self, stack)
        except Exception:
            pass
        if iterator:
            try:
                count = len(param_group["params"])
                stack = capture_user_stack(1, limit=2)
                for recorder in list(_wrapped.recorders):
                    recorder.optimizer_groups.group_added(self, id(source), type(source).__name__, count, stack)
            except Exception:
                pass
        return result
    return marked(add_param_group, original)


_wrapped = WrappedAttributes(lambda: [(torch.optim.Optimizer, "add_param_group", _recording)])

# Record parameter groups into a recorder's `optimizer_groups` until `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate

__all__ = ["OptimizerGroups", "SpentGroup", "activate", "deactivate"]
