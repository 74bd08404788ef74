"""Which same-file functions some call passes a graph tensor.

In a file that runs backward passes, a helper's parameters annotated `Tensor`
were taken to carry a graph whatever its callers passed.  sbi's
`z_standardization(batch_t: Tensor)` computes `t_std = torch.std(batch_t)`
and clamps it in place (`t_std[t_std < min_std] = min_std`): a hazard only if
`batch_t` carried a graph, but every caller (in other files, or helpers of the
same file handing on their own parameters) passes simulated training data.
The graph link needs evidence: a call, in this file and with gradients on,
that passes the function a value known to carry a graph (a parameterised
module's output, a graph tensor, a leaf that requires grad, the output of a
callable the caller was given, `model(x)`), or that passes on such a value
from a caller that is itself fed so.  Functions are matched by name (`f(...)`
and `self.f(...)`), like ``callers.py``; a function called only from other
files, or only handed on as a callback, has no evidence and is silent.
"""

from __future__ import annotations

from collections import defaultdict


class GraphCallers:
    """Calls of same-file functions, as the walk sees them: which function a
    call with a graph tensor reaches directly, and which pass on values whose
    graph comes only from their own (provisional) parameters."""

    def __init__(self) -> None:
        self.fed: set[str] = set()  # a call passes a value with evidence of a graph
        # caller -> callees it passes values computed from its own parameters
        self.hands_on: dict[str, set[str]] = defaultdict(set)
        # callee -> positions (int) / keywords (str) some call passes a graph value
        self.positions: dict[str, set] = defaultdict(set)
        # caller -> (callee, position or keyword) it hands its own parameters' values
        self.handed_positions: dict[str, set] = defaultdict(set)

    def graph_call(self, callee: str, where=None) -> None:
        """``where``: the position or keyword the graph value lands on (None: unknown)."""
        self.fed.add(callee)
        if where is not None:
            self.positions[callee].add(where)

    def handed_on(self, caller: str, callee: str, where=None) -> None:
        self.hands_on[caller].add(callee)
        if where is not None:
            self.handed_positions[caller].add((callee, where))

    def reached(self) -> set[str]:
        """Every function some chain of calls from a fed one reaches."""
        out, todo = set(self.fed), list(self.fed)
        while todo:
            for callee in self.hands_on.get(todo.pop(), ()):
                if callee not in out:
                    out.add(callee)
                    todo.append(callee)
        return out

    def fed_positions(self) -> dict:
        """Callee -> the positions and keywords at which some call passes a graph:
        directly, or handing on its own parameters from a function that is fed."""
        out = {callee: set(places) for callee, places in self.positions.items()}
        for caller in self.reached():
            for callee, where in self.handed_positions.get(caller, ()):
                out.setdefault(callee, set()).add(where)
        return out
