"""What the `.grad` of a few of an optimizer's parameters held at its step() and at each backward().

`optimizer.step()` applies what `.grad` holds. A training loop that never clears it (no
`zero_grad()`, no `p.grad = None`) makes each backward() add to the gradients the previous step
already applied, so every step applies the sum of all gradients so far. Nothing fails.

The evidence is kept small and taken only over an optimizer's first `CHECKED_STEPS` steps: for up
to `SAMPLED_PARAMETERS` parameters, a weak reference to the gradient tensor, its version and a copy
of `SAMPLED_VALUES` of its elements, taken where its first nonzero values are (an embedding's
gradient is zero in the rows a batch did not touch, often the first ones). A sparse gradient
(`nn.Embedding(..., sparse=True)`) is sampled in the values it stores; autograd adds into it in
place, as into a dense one. Right after a step, the sample is taken; when the next
backward() starts, a gradient that is still the same tensor, with the same version and the same
values (not all zero), is what the step applied, carried into this backward(); if it is still there,
not cleared, when the same optimizer steps again, that step applies the sum. Gradient accumulation
on purpose (several backward() calls, one step(), then zero_grad()) clears after the step and is not
taken. No tensor of the program is held: only weak references and copies of a few numbers.

The same samples tell when one optimizer steps on gradients another optimizer's loss left
(AD230): a backward() fills the gradients of two optimizers' parameters (a generator's loss
reaches the discriminator it is computed through), one of them (the generator's) steps, and the
other's (the discriminator's) are still there, never cleared, when its own backward() adds to
them and it steps: its step applies the other loss's gradients too.

And the other order (AD176): an optimizer's own backward() fills its gradients; another optimizer
is cleared and its loss, computed through the first one's model (an actor's loss through the
critic), is backpropagated before the first one steps: that backward() adds into the first one's
gradients, and its step applies both losses' gradients.
"""

from __future__ import annotations

import itertools
import weakref
from dataclasses import dataclass, field
from typing import NamedTuple

import torch

from autograd_doctor.recording.probe import MAX_NODES, graph_nodes

# Steps per optimizer whose gradients are sampled; the bug shows from the second step on.
CHECKED_STEPS = 4
SAMPLED_PARAMETERS = 4
SAMPLED_VALUES = 16


@dataclass
class GradientSample:
    """One parameter's gradient at one moment: which tensor, its version, and SAMPLED_VALUES of its
    stored values from `offset` on."""

    gradient: weakref.ref
    version: int
    offset: int
    values: torch.Tensor

    @classmethod
    def of(cls, parameter) -> "GradientSample | None":
        gradient = getattr(parameter, "grad", None)
        if not isinstance(gradient, torch.Tensor):
            return None
        stored = _stored_values(gradient)
        if stored is None or stored.numel() == 0:
            return None
        try:
            reference = weakref.ref(gradient)
        except TypeError:
            return None
        offset = _first_nonzero_block(stored)
        return cls(reference, gradient._version, offset, stored[offset:offset + SAMPLED_VALUES].clone())

    def unchanged(self, parameter) -> bool:
        """The parameter's `.grad` is still this tensor, unwritten, with these (nonzero) values."""
        gradient = getattr(parameter, "grad", None)
        if gradient is None or gradient is not self.gradient() or gradient._version != self.version \
                or cleared(gradient):
            return False
        stored = _stored_values(gradient)
        return stored is not None and torch.equal(stored[self.offset:self.offset + SAMPLED_VALUES], self.values)

    def kept(self, parameter) -> bool:
        """The parameter's `.grad` is still this tensor and was not cleared (not all zero)."""
        gradient = getattr(parameter, "grad", None)
        return gradient is not None and gradient is self.gradient() and not cleared(gradient)


def _stored_values(gradient) -> "torch.Tensor | None":
    """The values a gradient stores, flat: a dense contiguous gradient's elements, a sparse COO
    gradient's values (not its indices); None for another layout, which is not read."""
    gradient = gradient.detach()
    if gradient.layout is torch.strided:
        return gradient.view(-1) if gradient.is_contiguous() else None
    if gradient.layout is torch.sparse_coo:
        return gradient._values().reshape(-1)
    return None


def _first_nonzero_block(stored) -> int:
    """The offset of the first block of SAMPLED_VALUES values holding a nonzero one (0 when all are
    zero). One pass over the values, in blocks: only a bool per block is allocated."""
    if bool(stored[:SAMPLED_VALUES].any()):
        return 0
    whole = stored.numel() // SAMPLED_VALUES * SAMPLED_VALUES
    if whole:
        blocks = stored[:whole].view(-1, SAMPLED_VALUES).any(dim=1)
        if bool(blocks.any()):
            return int(blocks.to(torch.uint8).argmax()) * SAMPLED_VALUES  # argmax: the first maximum
    return whole if whole < stored.numel() and bool(stored[whole:].any()) else 0


def grad_of(tensor):
    """`tensor.grad`, or None for a non-leaf that does not retain its gradient (its `.grad` is None),
    without reading it there: PyTorch warns at that read ("The .grad attribute of a Tensor that is
    not a leaf Tensor is being accessed"), and the warning would name the doctor's line. A module's
    parameters are non-leaf tensors under a differentiable optimizer (torchopt's MetaOptimizer,
    higher, learn2learn put the updated tensors in `module._parameters`)."""
    if not (tensor.is_leaf or tensor.retains_grad):
        return None
    return tensor.grad


def cleared(gradient) -> bool:
    """All its stored values are zero: what zero_grad(set_to_none=False) leaves (a sparse gradient's
    zero_() leaves no values at all). A layout that is not read counts as not cleared."""
    stored = _stored_values(gradient)
    return stored is not None and not bool(stored.any())


@dataclass
class SampledGradients:
    """A few of an optimizer's gradients sampled at one moment, followed into the next backward()
    calls (follow_into_backward)."""

    optimizer: object  # a weak reference to it: its id alone may be a later optimizer's
    parameters: list  # weak references to the sampled parameters
    samples: list  # their GradientSample at that moment
    carried_into: object = None  # the BackwardCall that started with them still there, unchanged
    versions_at_carry: list = field(default_factory=list)  # their gradients' versions as it started


@dataclass
class OptimizerGradients(SampledGradients):
    """The gradients one optimizer's last step applied (AD209)."""

    steps: int = 1


class CarriedGradients(NamedTuple):
    """The gradients a step() applied, still there at the next step() (AD209): the first
    backward() after that step, and whether nothing was added to them since (every sampled
    gradient as the step applied it: that backward() filled other parameters)."""

    backward_call: object
    added_nothing: bool


class GradientStates:
    """Per optimizer (by id, checked against a weak reference: an optimizer made after another
    was freed may get its id), what its sampled gradients held; the recorder keeps one."""

    def __init__(self):
        self.optimizers: dict[int, OptimizerGradients] = {}
        self.checked_steps: dict[int, tuple[weakref.ref, int]] = {}  # id -> (the optimizer, its steps)
        # The last backward() call and, at its start, the gradients of the optimizers within their
        # checked steps: which of them that backward() filled (AD230).
        self.last_backward = None
        self.gradients_before_backward: dict[int, list] = {}
        # (id of X, id of Y) for optimizers X whose parameters the last backward()'s graph uses on
        # the way from its loss to parameters of Y (a discriminator between a generator's loss and
        # the generator): the only pairs AD230 is judged for.
        self.between_at_last_backward: set[tuple[int, int]] = set()
        # id of an optimizer -> LeftGradients: what another optimizer's backward() left on its
        # parameters after that optimizer stepped (AD230).
        self.left_by_others: dict[int, LeftGradients] = {}
        # Each checked optimizer's steps as the last backward() started, and, per optimizer, what a
        # later backward() of another optimizer's loss added to its gradients before its step (AD176).
        self.steps_at_last_backward: dict[int, int] = {}
        # The ids of the parameters the last backward()'s graph accumulates into, when two or more
        # optimizers were checked as it started (None otherwise): a clip after it over none of
        # them clipped gradients it did not fill (AD177). Ids only, of parameters the optimizers hold.
        self.reached_by_last_backward: set[int] | None = None
        self.added_by_others: dict[int, AddedGradients] = {}

    def _steps_of(self, optimizer) -> int:
        reference, steps = self.checked_steps.get(id(optimizer), (None, 0))
        return steps if reference is not None and reference() is optimizer else 0

    def step_done(self, optimizer, stack=None) -> None:
        """Right after step() (called from `stack`): sample the gradients it applied (first
        CHECKED_STEPS steps only)."""
        try:
            reference = weakref.ref(optimizer)
        except TypeError:
            return
        steps = self._steps_of(optimizer) + 1
        self.checked_steps[id(optimizer)] = (reference, steps)
        self.left_by_others.pop(id(optimizer), None)  # it stepped on them: its own (AD209's), not left
        self.added_by_others.pop(id(optimizer), None)
        self._note_left_gradients(optimizer, stack)
        if steps > CHECKED_STEPS:
            self.optimizers.pop(id(optimizer), None)
            return
        parameters, samples = [], []
        for parameter in _parameters_of(optimizer):
            sample = GradientSample.of(parameter)
            if sample is not None:
                parameters.append(weakref.ref(parameter))
                samples.append(sample)
                if len(samples) >= SAMPLED_PARAMETERS:
                    break
        if samples:
            self.optimizers[id(optimizer)] = OptimizerGradients(reference, parameters, samples, steps=steps)
        else:
            self.optimizers.pop(id(optimizer), None)

    def backward_starting(self, call, roots: list = ()) -> None:
        """A backward() of `roots` starts: are the gradients the last step applied still there
        (carried in), or, once carried in, were they cleared since?"""
        follow_into_backward(self.left_by_others, call)
        follow_into_backward(self.optimizers, call)
        self._gradients_at_backward(call, roots)

    def carried_into_step(self, optimizer) -> "CarriedGradients | None":
        """Before step(): the BackwardCall that added to the gradients the previous step applied,
        when they are still there, never cleared; None otherwise. Forgets the optimizer's sample."""
        state = self.optimizers.pop(id(optimizer), None)
        if state is None or state.optimizer() is not optimizer or state.carried_into is None:
            return None
        parameters = [reference() for reference in state.parameters]
        if all(p is not None and sample.kept(p) for p, sample in zip(parameters, state.samples)):
            # Nothing added since that step (every sample as it applied it): the backward() before
            # this step filled other parameters, and this step applies the same gradients again.
            return CarriedGradients(state.carried_into,
                                    all(sample.unchanged(p) for p, sample in zip(parameters, state.samples)))
        return None

    # ---- gradients another optimizer's backward() left (AD230) ---------------------------------

    def _checked_optimizers(self) -> list:
        """The optimizers seen stepping, still within their first CHECKED_STEPS steps."""
        alive = []
        for key, (reference, steps) in list(self.checked_steps.items()):
            optimizer = reference()
            if optimizer is None:
                del self.checked_steps[key]  # freed (a MAML inner loop's optimizer per task): forget it
            elif steps <= CHECKED_STEPS:
                alive.append(optimizer)
        return alive

    def _gradients_at_backward(self, call, roots: list) -> None:
        """Before a backward(): the gradients of the checked optimizers, to tell which of them this
        backward() fills, and which of them sit between its loss and another's parameters (AD230,
        AD176)."""
        previous_call, previous_states = self.last_backward, self.gradients_before_backward
        previous_steps = self.steps_at_last_backward
        self.last_backward = call
        self.gradients_before_backward = {}
        self.between_at_last_backward = set()
        self.steps_at_last_backward = {}
        self.reached_by_last_backward = None
        checked = self._checked_optimizers()
        if len(checked) < 2:
            return  # one optimizer seen stepping: no other one to leave gradients on its parameters
        for optimizer in checked:
            self.gradients_before_backward[id(optimizer)] = [
                (weakref.ref(p), GradientState.of(p)) for p in _sampled_parameters(optimizer)]
            self.steps_at_last_backward[id(optimizer)] = self._steps_of(optimizer)
        self.between_at_last_backward = optimizers_between(roots, checked)
        self.reached_by_last_backward = reached_parameters(roots)
        self._note_added_gradients(call, checked, previous_call, previous_states, previous_steps)

    def _note_added_gradients(self, call, checked: list, previous_call, previous_states: dict,
                              previous_steps: dict) -> None:
        """As backward() `call` starts: for each pair (X, Y) of checked optimizers where X's model sits
        between this loss and Y's parameters, Y's gradients empty (cleared for this loss) and X's full,
        filled from empty by the backward() just before with no step of X since (X's own loss): this
        backward() is about to add Y's loss into X's gradients (AD176, judged at X's step)."""
        if previous_call is None:
            return
        by_id = {id(optimizer): optimizer for optimizer in checked}
        for x_id, y_id in self.between_at_last_backward:
            x, y = by_id.get(x_id), by_id.get(y_id)
            now_x, now_y = self.gradients_before_backward.get(x_id), self.gradients_before_backward.get(y_id)
            before_x = previous_states.get(x_id)
            if x is None or y is None or not now_x or not now_y or not before_x or x_id in self.added_by_others:
                continue
            if previous_steps.get(x_id) != self._steps_of(x) or not all(state.empty for _, state in now_y):
                continue
            if not all(state.empty for _, state in before_x) or all(state.empty for _, state in now_x):
                continue
            self.added_by_others[x_id] = AddedGradients(
                weakref.ref(x), [reference for reference, _ in now_x], [state for _, state in now_x],
                own_backward=previous_call, added_by=call, other=weakref.ref(y))

    def added_by_another_at_step(self, optimizer) -> "AddedGradients | None":
        """Before `optimizer.step()`: the record of another optimizer's backward() that added into its
        gradients after its own backward(), when that backward() was the last one and did add to them
        (the same gradient tensors, written since); None otherwise. Forgets the record."""
        added = self.added_by_others.pop(id(optimizer), None)
        if added is None or added.optimizer() is not optimizer or added.added_by is not self.last_backward:
            return None
        for reference, state in zip(added.parameters, added.states):
            parameter = reference()
            gradient = getattr(parameter, "grad", None) if parameter is not None else None
            if not isinstance(gradient, torch.Tensor) or state.gradient is None or state.gradient() is not gradient:
                return None
        if all(state.holds(reference()) for reference, state in zip(added.parameters, added.states)):
            return None  # that backward() did not reach them after all
        return added

    def _filled_by_last_backward(self, optimizer, from_empty: bool = False) -> list | None:
        """The sampled parameters of `optimizer` whose gradients the last backward() filled (another
        tensor, or written since its start), when it filled all of them; else None. `from_empty`:
        only when they were all None or zero as it started (cleared before it)."""
        before = self.gradients_before_backward.get(id(optimizer))
        if not before:
            return None
        parameters = []
        for reference, state in before:
            if from_empty and not state.empty:
                return None
            parameter = reference()
            if parameter is None:
                return None
            gradient = getattr(parameter, "grad", None)
            if gradient is None or state.holds(parameter) or cleared(gradient):
                return None
            parameters.append(parameter)
        return parameters

    def _note_left_gradients(self, stepped, stack) -> None:
        """Right after `stepped` stepped on the last backward()'s gradients: every other checked
        optimizer whose gradients that same backward() filled now holds what it left."""
        if self.last_backward is None or self._filled_by_last_backward(stepped) is None:
            return
        for optimizer in self._checked_optimizers():
            if optimizer is stepped or id(optimizer) in self.left_by_others \
                    or (id(optimizer), id(stepped)) not in self.between_at_last_backward:
                continue
            # Cleared before that backward(): gradients never cleared at all are AD209's.
            parameters = self._filled_by_last_backward(optimizer, from_empty=True)
            if parameters is None:
                continue
            samples = [GradientSample.of(p) for p in parameters]
            if any(sample is None for sample in samples):
                continue
            self.left_by_others[id(optimizer)] = LeftGradients(
                weakref.ref(optimizer), [weakref.ref(p) for p in parameters], samples,
                left_by=self.last_backward, stepped_by=type(stepped).__name__, step_stack=stack)

    def left_by_another_at_step(self, optimizer) -> "LeftGradients | None":
        """Before `optimizer.step()`: what another optimizer's backward() left on its parameters, when
        a later backward() (carried_into) started with it still there and added to it, and it is still
        there now; None otherwise. Forgets the record."""
        left = self.left_by_others.pop(id(optimizer), None)
        if left is None or left.optimizer() is not optimizer or left.carried_into is None:
            return None
        parameters = [reference() for reference in left.parameters]
        if not all(p is not None and sample.kept(p) for p, sample in zip(parameters, left.samples)):
            return None
        added = any(p.grad._version != version for p, version in zip(parameters, left.versions_at_carry))
        return left if added else None


@dataclass
class LeftGradients(SampledGradients):
    """Gradients a backward() left on an optimizer's parameters, sampled right after another
    optimizer stepped on that backward() (AD230)."""

    left_by: object = None  # the BackwardCall that filled them
    stepped_by: str = ""  # the class of the optimizer that stepped on that backward()
    step_stack: object = None  # where that step() was called (the user's frames), or None


@dataclass
class AddedGradients:
    """A backward() of another optimizer's loss that started while an optimizer's gradients held what
    its own backward() had just filled, and would add to them (AD176)."""

    optimizer: object  # a weak reference to the optimizer whose gradients it adds to
    parameters: list  # weak references to its sampled parameters
    states: list  # their GradientState as that backward() started
    own_backward: object = None  # the BackwardCall that filled them (the optimizer's own loss)
    added_by: object = None  # the BackwardCall that adds to them
    other: object = None  # a weak reference to the optimizer cleared for that backward()'s loss


def follow_into_backward(records: dict, call) -> None:
    """As a backward() starts, for each record of sampled gradients (key -> SampledGradients): still
    there, unchanged, they are carried into this backward(); cleared or replaced before it, or since
    they were carried in, or their optimizer gone, the record is forgotten."""
    for key, record in list(records.items()):
        parameters = [reference() for reference in record.parameters]
        if record.optimizer() is None:
            del records[key]  # that optimizer is gone: it will not step again
        elif record.carried_into is None:
            if all(p is not None and sample.unchanged(p) for p, sample in zip(parameters, record.samples)):
                record.carried_into = call
                record.versions_at_carry = [p.grad._version for p in parameters]
            else:
                del records[key]  # cleared (or replaced) before this backward: the usual loop
        elif not all(p is not None and sample.kept(p) for p, sample in zip(parameters, record.samples)):
            del records[key]  # cleared between two backward() calls


def optimizers_between(roots: list, optimizers: list) -> set[tuple[int, int]]:
    """(id of X, id of Y) for each X whose parameter a node of the graph under `roots` takes
    directly while another of its inputs leads down to a parameter of Y: X's model computes on
    Y's output on the way to the loss (a discriminator on a generator's sample, a critic on an
    actor's action). A model that only feeds Y's (an encoder under a head) gives no pair."""
    owner: dict[int, int] = {}  # id of a parameter -> the bit of its optimizer
    for index, optimizer in enumerate(optimizers):
        for group in getattr(optimizer, "param_groups", ()):
            for parameter in group.get("params", ()):
                owner.setdefault(id(parameter), 1 << index)
    nodes = list(graph_nodes(roots))
    children = {id(node): [child for child, _ in _next_functions(node) if child is not None] for node in nodes}

    def parameter_bit(node) -> int:
        """The bit of the optimizer of the parameter this node accumulates into, also through one
        node in between (`TBackward0` of a Linear's weight, a cast); 0 for none."""
        variable = getattr(node, "variable", None)
        if variable is not None:
            return owner.get(id(variable), 0)
        below = children.get(id(node))
        if below is None:  # a node past graph_nodes' bound
            below = [child for child, _ in _next_functions(node) if child is not None]
        if len(below) == 1 and getattr(below[0], "variable", None) is not None:
            return owner.get(id(below[0].variable), 0)
        return 0

    own_bit = {id(node): parameter_bit(node) for node in nodes}

    def bit_of(node) -> int:
        bit = own_bit.get(id(node))
        return parameter_bit(node) if bit is None else bit  # None: past graph_nodes' bound

    reach = dict(own_bit)  # id of a node -> bits of the optimizers with a parameter at or below it
    for _ in range(len(nodes)):  # a fixed point: graph_nodes' order is not a topological one
        changed = False
        for node in reversed(nodes):  # mostly children first: one or two passes
            bits = reach[id(node)]
            for child in children[id(node)]:
                bits |= reach[id(child)] if id(child) in reach else bit_of(child)
            if bits != reach[id(node)]:
                reach[id(node)], changed = bits, True
        if not changed:
            break
    pairs: set[tuple[int, int]] = set()
    for node in nodes:
        direct = below = 0
        for child in children[id(node)]:
            bit = bit_of(child)
            direct |= bit
            if not bit:
                below |= reach.get(id(child), 0)
        if not direct:
            continue
        for x, optimizer_x in enumerate(optimizers):
            if direct & (1 << x):
                pairs.update((id(optimizer_x), id(optimizer_y)) for y, optimizer_y in enumerate(optimizers)
                             if y != x and below & (1 << y))
    return pairs


def reached_parameters(roots: list) -> set[int] | None:
    """The ids of the tensors the graph under `roots` accumulates gradients into (its AccumulateGrad
    nodes' variables)."""
    reached, walked = set(), 0
    for node in graph_nodes(roots):
        walked += 1
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
    return reached if walked < MAX_NODES else None  # a graph past the bound: not known in full


def _next_functions(node) -> tuple:
    try:
        return node.next_functions
    except Exception:
        return ()


def _parameters_of(optimizer):
    """The optimizer's parameters, group after group."""
    for group in getattr(optimizer, "param_groups", ()):
        yield from group.get("params", ())


def _sampled_parameters(optimizer) -> list:
    """The first SAMPLED_PARAMETERS parameters of the optimizer that require grad."""
    requiring_grad = (p for p in _parameters_of(optimizer) if getattr(p, "requires_grad", False))
    return list(itertools.islice(requiring_grad, SAMPLED_PARAMETERS))


class GradientState(NamedTuple):
    """Which gradient tensor a parameter holds (a weak reference; None for none), its version, and
    whether it is empty: None, or all its values zero."""

    gradient: object
    version: int
    empty: bool

    @classmethod
    def of(cls, parameter) -> "GradientState":
        gradient = getattr(parameter, "grad", None)
        if not isinstance(gradient, torch.Tensor) or gradient.numel() == 0:
            return cls(None, -1, True)
        return cls(weakref.ref(gradient), gradient._version, cleared(gradient))

    def holds(self, parameter) -> bool:
        """The parameter holds the same gradient tensor as then, at the same version (or none)."""
        gradient = getattr(parameter, "grad", None)
        if self.gradient is None or not isinstance(gradient, torch.Tensor):
            return self.gradient is None and not isinstance(gradient, torch.Tensor)
        return self.gradient() is gradient and gradient._version == self.version
