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

    def graph_call(self, callee: str) -> None:
        self.fed.add(callee)

    def handed_on(self, caller: str, callee: str) -> None:
        self.hands_on[caller].add(callee)

    def reached(self) -> set[str]:
        """Every function some chain of calls from a fed one reaches."""
        out, todo = set(self.fed), list(self.fed)
        while todo:
            for callee in self.hands_on.get(todo.pop(), ()):
                if callee not in out:
                    out.add(callee)
                    todo.append(callee)
        return out
