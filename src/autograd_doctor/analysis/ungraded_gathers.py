"""AD162: a tensor with a graph gathered with `torch.distributed.all_gather`, whose outputs carry
no graph, so the parameters that computed it get no gradient from a loss on the gathered buffers.

At the gather (the first calls of each line, a few lines at most): the ids of the leaves the
gathered tensor's graph reaches, walked once (bounded); no tensor is kept. At each optimizer
step() while such a gather is remembered: the optimizer's parameters among those leaves that
require grad; when there are some and none of them has a gradient, the gather is reported (once
per line). A gather whose caller puts its own tensor back (`gathered[rank] = features`) gives
those parameters their gradients, and is silent.

The help, for a statement `<dist>.all_gather(<list>, <tensor>)` with names as arguments, adds the
line that puts the tensor, with its graph, back in this process's place of the list: the values
are the same (the gathered copy of one's own tensor is that tensor), and the gradient reaches the
parameters that computed it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograd_doctor.analysis.source_scope import reached_leaves
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_at, statement_location

# Lines remembered, calls of each line walked, graph nodes walked per call.
MAX_LINES = 8
CALLS_WALKED_PER_LINE = 2
MAX_WALKED_NODES = 5000


@dataclass
class Gather:
    stack: tuple
    leaf_ids: set
    calls: int = 0


class UngradedGathers:
    """The gathers of tensors with a graph seen so far, and the lines already reported."""

    def __init__(self):
        self._gathers: dict = {}  # site -> Gather
        self._reported: set = set()

    def seen(self, tensor, stack) -> None:
        """At a gather of `tensor` (which has a graph): note the leaves its graph reaches."""
        site = stack[0] if stack else None
        if site is None or site in self._reported:
            return
        gather = self._gathers.get(site)
        if gather is None:
            if len(self._gathers) >= MAX_LINES:
                return
            gather = self._gathers[site] = Gather(stack, set())
        if gather.calls >= CALLS_WALKED_PER_LINE:
            return
        gather.calls += 1
        gather.leaf_ids |= reached_leaves([tensor], MAX_WALKED_NODES)

    def at_step(self, optimizer, stack) -> Diagnosis | None:
        if not self._gathers:
            return None
        parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())]
        for site, gather in list(self._gathers.items()):
            behind = [p for p in parameters if id(p) in gather.leaf_ids and p.requires_grad]
            if not behind or any(p.grad is not None for p in behind):
                continue
            self._reported.add(site)
            del self._gathers[site]
            return _diagnosis(optimizer, gather.stack, stack, behind, len(parameters))
        return None


def _diagnosis(optimizer, gather_stack, step_stack, behind: list, held: int) -> Diagnosis:
    site = gather_stack[0]
    statement = statement_at(site.filename, site.lineno)
    primary = location_of(site, role="gather", note="all_gather copies values: its outputs carry no graph")
    related = []
    if len(gather_stack) > 1:
        related.append(location_of(gather_stack[1], role="call", note="called from here"))
    if step_stack:
        related.append(location_of(step_stack[0], role="step",
                                   note=f"{type(optimizer).__name__}.step(): the parameters behind the gathered "
                                        "tensor have no gradient"))
    notes = [f"the gathered tensor was computed from {len(behind)} of the {held} parameters this optimizer holds; "
             "none of them got a gradient: the loss reads the gathered copies, which autograd does not connect "
             "to the tensor they were copied from"]
    helps = []
    change = _put_back_help(site.filename, statement)
    if change is not None:
        helps.append(change)
    helps.append(Suggestion("put this process's own tensor back in its place after the gather "
                            "(`gathered[dist.get_rank()] = features`), or gather with the differentiable "
                            "torch.distributed.nn.all_gather"))
    return Diagnosis(code=codes.UNGRADED_GATHER, title=codes.title(codes.UNGRADED_GATHER), severity="warning",
                     primary=primary, related=related, notes=notes, help=helps)


def _put_back_help(filename: str, statement: ast.stmt | None) -> Suggestion | None:
    """`dist.all_gather(gathered, features)` -> the same, then `gathered[dist.get_rank()] = features`."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    call = statement.value
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "all_gather" and len(call.args) == 2
            and not call.keywords and all(isinstance(a, ast.Name) for a in call.args)):
        return None
    module = segment(filename, call.func.value)
    original = segment(filename, statement)
    if module is None or original is None or "\n" in original:
        return None
    outputs, tensor = call.args[0].id, call.args[1].id
    return Suggestion(f"put {tensor}, with its graph, back in this process's place of {outputs}: the values are the "
                      "same, and the gradient reaches what computed it",
                      f"{original}\n{outputs}[{module}.get_rank()] = {tensor}", statement_location(filename, statement))
