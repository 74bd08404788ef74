"""AD247: a gradient taken with `create_graph=True` whose graph no backward() runs: the penalty
built from it is left out of the loss.

WGAN-GP's gradient penalty, R1, an input-gradient or Jacobian regularizer: the user takes
`g = torch.autograd.grad(D(x).sum(), x, create_graph=True)[0]`, builds a penalty from `g`, and must
add it to the loss that is backpropagated. When the penalty is computed and left out
(`loss_D = D(fake).mean() - D(real).mean()`), the double-backward graph that create_graph built is
never run: the critic trains on the other terms alone. No error, no `.grad` is None.

Judged at run time, from what ran:
- after each `torch.autograd.grad(..., create_graph=True)` call from the user's code with respect
  to tensors that are not parameters (a penalty is on the inputs; a gradient with respect to
  parameters is a MAML-style adaptation, whose evaluation losses are often never backpropagated),
  the ids of its results' grad_fn nodes are noted (ids only: no tensor or node is kept);
- at the next backward() (not another autograd.grad), the loss's graph is walked once; a noted
  node it does not reach is a graph left behind. In the frame of that backward(), a name bound to
  a tensor whose graph reaches such a node, and reaches parameters the loss also reaches (it would
  train what the loss trains), is the penalty left out: the one whose graph holds the others'
  (`grad_penalty`, not `grad` or `grad_norm`), computed from the gradient (not the gradient itself,
  reshaped: a gradient taken only to be looked at is not a penalty).
Reported the second time the same autograd.grad line is left behind by the same backward() line
(one iteration can be a warm-up). The line named is the assignment of the backpropagated loss
(`loss_D = ...`); the help adds the penalty to it (its mean, when it is not a scalar).
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.live_values import readable_grad_fn
from autograd_doctor.analysis.errors.context import last_assignment
from autograd_doctor.analysis.source_scope import frame_locals, live_frame, root_expression
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (location_of, replace_node_text, segment, statement_at,
                                              statement_location)

# Graph nodes walked from the backpropagated loss, and from each candidate name's tensor.
MAX_NODES = 50_000
MAX_CANDIDATE_NODES = 20_000
MAX_CANDIDATES = 32
# autograd.grad calls remembered between two backward() calls.
MAX_PENDING = 8
# Times the same autograd.grad line is left behind by the same backward() line before a report.
REPORT_AFTER = 2


def _create_graph(args: tuple, kwargs: dict) -> bool:
    value = kwargs.get("create_graph", args[4] if len(args) > 4 else False)
    return bool(value) if isinstance(value, bool) else False


def _tensors(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for t in value if isinstance(t, torch.Tensor)]
    return []


def _roots(args: tuple, kwargs: dict) -> list:
    first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    return _tensors(first)


def _walk(start_nodes, limit: int, stop_ids=frozenset()):
    """(ids of the nodes reached, the AccumulateGrad nodes met among `stop_ids`), or None past
    `limit` nodes. Nodes whose id is in `stop_ids` are not gone through."""
    seen: set[int] = set()
    shared = False
    stack = [n for n in start_nodes if n is not None]
    while stack:
        node = stack.pop()
        key = id(node)
        if key in seen:
            continue
        seen.add(key)
        if key in stop_ids:  # a node of the loss's graph: not gone through again
            shared = shared or node.name() == "torch::autograd::AccumulateGrad"
            continue
        if len(seen) > limit:
            return None
        for following, _ in getattr(node, "next_functions", ()):
            if following is not None and id(following) not in seen:
                stack.append(following)
    return seen, shared


class UnbackpropagatedPenalties:
    """Notes the graphs autograd.grad(create_graph=True) builds, and reports one that the next
    backward() leaves behind while a penalty made from it sits in that backward()'s frame."""

    def __init__(self):
        self._pending: list = []  # (the autograd.grad site, ids of its results' grad_fn nodes)
        self._counts: dict = {}
        self._reported: set = set()

    def after_grad(self, call, args: tuple, kwargs: dict, result) -> None:
        site = call.site if call is not None else None
        if site is None or site in self._reported or not _create_graph(args, kwargs):
            return
        inputs = _tensors(args[1] if len(args) > 1 else kwargs.get("inputs"))
        if any(isinstance(t, torch.nn.Parameter) for t in inputs):
            return  # a gradient with respect to parameters: a MAML-style adaptation, not a penalty on inputs
        ids = {id(t.grad_fn) for t in _tensors(result) if t.grad_fn is not None}
        if ids:
            self._pending.append((site, ids))
            del self._pending[:-MAX_PENDING]

    def before_backward(self, call, args: tuple, kwargs: dict) -> Diagnosis | None:
        pending, self._pending = self._pending, []
        if not pending or call is None or call.site is None:
            return None
        roots = _roots(args, kwargs)
        walked = _walk([t.grad_fn for t in roots if t.requires_grad], MAX_NODES)
        if walked is None:
            return None
        reached, _ = walked
        for site, ids in pending:
            if ids & reached:
                continue  # the loss runs that graph: the penalty is in it
            key = (site, call.site)
            self._counts[key] = self._counts.get(key, 0) + 1
            if self._counts[key] < REPORT_AFTER or site in self._reported:
                continue
            diagnosis = _diagnosis(site, ids, call, roots, reached)
            if diagnosis is not None:
                self._reported.add(site)
                return diagnosis
        return None


def _penalty_left_out(call, roots: list, ids: set[int], reached: set[int]):
    """(name, tensor) in the backward()'s frame: the tensor that requires grad, is not a root, whose
    graph reaches one of the nodes `ids` and a leaf the loss reaches, and holds every other such
    tensor's node; else None."""
    frame = live_frame(call.site)
    if frame is None:
        return None
    root_ids = {id(t) for t in roots}
    found = []
    for name, value in list(frame_locals(frame).items()):
        if len(found) >= MAX_CANDIDATES:
            break
        if not isinstance(value, torch.Tensor) or id(value) in root_ids or not value.requires_grad \
                or readable_grad_fn(value) is None or id(value.grad_fn) in reached:
            continue
        walked = _walk([value.grad_fn], MAX_CANDIDATE_NODES, stop_ids=reached)
        if walked is None:
            continue
        nodes, shares_leaves = walked
        if nodes & ids and shares_leaves:
            found.append((name, value, nodes))
    outer = [(name, value) for name, value, nodes in found
             if all(id(other.grad_fn) in nodes for _, other, _ in found)]
    del frame
    if len(outer) != 1 or _reshaped_gradient(outer[0][1], ids):
        return None  # the gradient itself (a norm of it logged, say), not a penalty computed from it
    return outer[0]


# Nodes that only reshape or copy what they are given: a tensor behind them is the gradient itself.
_RESHAPING_NODES = {"ViewBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "SelectBackward0",
                    "SliceBackward0", "AsStridedBackward0", "TBackward0", "PermuteBackward0", "SqueezeBackward0",
                    "SqueezeBackward1", "UnsqueezeBackward0", "ExpandBackward0", "CloneBackward0",
                    "TransposeBackward0", "ToCopyBackward0"}


def _reshaped_gradient(tensor, ids: set[int]) -> bool:
    """Whether `tensor` is one of the gradients (`ids`: their nodes), at most reshaped or copied."""
    node = tensor.grad_fn
    for _ in range(16):
        if node is None:
            return False
        if id(node) in ids:
            return True
        if node.name() not in _RESHAPING_NODES:
            return False
        following = [n for n, _ in node.next_functions if n is not None]
        node = following[0] if len(following) == 1 else None
    return False


def _assignment_of(filename: str, name: str, before: int) -> ast.Assign | None:
    """The last `name = ...` before line `before`, in the same function (or at the top level),
    when that binding is a plain assignment to the name (a help rewrites its value)."""
    statement = last_assignment(filename, name, before)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Name):
        return statement
    return None


def _diagnosis(grad_site, ids: set[int], call, roots: list, reached: set[int]) -> Diagnosis | None:
    found = _penalty_left_out(call, roots, ids, reached)
    if found is None:
        return None  # no penalty in the frame that would train what the loss trains: unknown intent
    name, tensor = found
    penalty = name if tensor.numel() == 1 else f"{name}.mean()"
    filename = call.site.filename
    backward_statement = statement_at(filename, call.site.lineno)
    root = root_expression(backward_statement) if backward_statement is not None else None
    grad_location = location_of(grad_site, role="grad", note="create_graph=True builds the graph of this gradient's "
                                                             "own backward, which no backward() runs")
    penalty_statement = _assignment_of(filename, name, call.site.lineno)
    related = [grad_location]
    if penalty_statement is not None:
        related.append(statement_location(filename, penalty_statement, role="penalty",
                                          note=f"{name} is built from that gradient and left out of the loss"))
    helps = []
    loss_statement = _assignment_of(filename, root.id, call.site.lineno) if isinstance(root, ast.Name) else None
    if loss_statement is not None:
        value_text = segment(filename, loss_statement.value)
        primary = statement_location(filename, loss_statement, role="loss",
                                     note=f"the loss {root.id}.backward() runs: {name} is not in it")
        related.append(location_of(call.site, role="backward", note="runs the loss's graph, not the penalty's"))
        change = replace_node_text(filename, loss_statement, loss_statement.value, f"{value_text} + {penalty}") \
            if value_text else None
        if change is not None:
            helps.append(Suggestion(f"add the penalty to the loss ({penalty}), so that backward() runs its graph and "
                                    f"the parameters it reaches are trained by it", change, primary))
    else:
        primary = location_of(call.site, role="backward", note=f"this backward() does not run {name}'s graph")
    helps.append(Suggestion(f"backpropagate {name} with the loss (add it to the loss, weighted as the method says), "
                            f"or take the gradient without create_graph=True if it is only looked at"))
    notes = [f"{name} was computed from a gradient taken with create_graph=True (line {grad_site.lineno}), at two "
             f"iterations now, and the backward() that followed ran none of its graph: the gradient's own backward "
             f"was built and never used, and the parameters it reaches are trained by the other terms alone "
             f"(no error)"]
    return Diagnosis(code=codes.UNBACKPROPAGATED_GRADIENT_PENALTY,
                     title=codes.title(codes.UNBACKPROPAGATED_GRADIENT_PENALTY), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)
