"""Which nodes of the graph a backward()/autograd.grad() call will run, told before it runs.

Strict mode decides at backward whether a saved tensor modified in place will be read: a
graph that is kept but never backpropagated is no hazard. PyTorch's engine
(`GraphTask::init_to_execute`) runs every node under the roots for a plain backward(). Given
`inputs` (autograd.grad, backward(inputs=...)), it runs only the nodes on a path from a root
to an input's node; the input's node itself runs for backward(inputs=...), which accumulates
into `.grad`, but not for autograd.grad, which only captures the gradient flowing into it.
With a single root, the root's node always runs.

Where this cannot be told (an input this torch cannot find the node of), the answer is None
and strict leaves the decision to PyTorch's own check when the saved tensor is read.
"""

from __future__ import annotations

import torch

from autograd_doctor import compat
from autograd_doctor.recording.calls import AUTOGRAD_BACKWARD, AUTOGRAD_GRAD, TENSOR_BACKWARD
from autograd_doctor.recording.probe import graph_nodes, roots_of

# Where each backward function takes its `inputs` positionally (Tensor.backward's self is args[0]).
_INPUTS_POSITION = {AUTOGRAD_GRAD: 1, TENSOR_BACKWARD: 4, AUTOGRAD_BACKWARD: 5}


def call_inputs(func, args: tuple, kwargs: dict) -> list | None:
    """The `inputs` a backward()/autograd.grad() call names; None when it names none."""
    position = _INPUTS_POSITION.get(func)
    inputs = args[position] if position is not None and len(args) > position else kwargs.get("inputs")
    if inputs is None:
        return None
    if isinstance(inputs, torch.Tensor) or hasattr(inputs, "node"):
        return [inputs]
    return list(inputs)


def _input_node(value):
    """The node an input's gradient flows into: a non-leaf's grad_fn, a leaf's AccumulateGrad,
    a GradientEdge's node; None when it cannot be told."""
    if isinstance(value, torch.Tensor):
        if value.grad_fn is not None:
            return value.grad_fn
        get_gradient_edge = compat.lookup("torch.autograd.graph.get_gradient_edge")
        if get_gradient_edge is None or not value.requires_grad:
            return None
        return get_gradient_edge(value).node
    return getattr(value, "node", None)


def nodes_to_run(func, args: tuple, kwargs: dict) -> list | None:
    """The nodes the call will run, or None when that cannot be told."""
    roots = roots_of(args, kwargs)
    nodes = list(graph_nodes(roots))
    inputs = call_inputs(func, args, kwargs)
    if inputs is None:
        return nodes
    targets = []
    for value in inputs:
        node = _input_node(value)
        if node is None:
            return None
        targets.append(node)
    callers: dict[int, list] = {}  # id(node) -> the nodes that pass a gradient to it
    for node in nodes:
        for child, _ in node.next_functions:
            if child is not None:
                callers.setdefault(id(child), []).append(node)
    runs: set[int] = set()
    pending = [id(target) for target in targets]
    while pending:
        for caller in callers.get(pending.pop(), ()):
            if id(caller) not in runs:
                runs.add(id(caller))
                pending.append(id(caller))
    if func is not AUTOGRAD_GRAD:
        runs.update(id(target) for target in targets)
    if len(roots) == 1 and roots[0].grad_fn is not None:
        runs.add(id(roots[0].grad_fn))
    return [node for node in nodes if id(node) in runs]
