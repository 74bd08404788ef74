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

Evidence is per position (set AN: TracKit's `FilterPool.forward(feat, bb)`, fed a
layer's output at position 0 only, wrote its copy of the data boxes `bb`): a
function's parameter carries a graph only where some call passes a graph value at
THAT position or keyword.  A value a provisional function hands on counts at the
callee's position only when the caller is itself fed at one of the parameters the
value comes from (its ``origins``); a value after a `*args`, and unknown callers,
give no position and no evidence.  ``ANY`` marks a forward whose class is a part
fed where no call shows the positions (a layer of `nn.Sequential`, a part built
as a local): every parameter, as before.
"""

from __future__ import annotations

from collections import defaultdict

ANY = "*"  # fed at every position (no call shows which)


def meets(origins, fed_at) -> bool:
    """A value from the parameters ``origins`` (names and positions) carries a graph
    where the function is fed at ``fed_at``."""
    return bool(fed_at) and (ANY in fed_at or bool(origins & fed_at))


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
        # caller -> (callee, position or keyword, origins) it hands values computed
        # from its own parameters (origins: which of them; None: any)
        self.handed_positions: dict[str, set] = defaultdict(set)

    def graph_call(self, callee: str, where=None) -> None:
        """``where``: the position or keyword the graph value lands on (None: unknown)."""
        self.fed.add(callee)
        if where is not None:
            self.positions[callee].add(where)

    def handed_on(self, caller: str, callee: str, where=None, origins=None) -> None:
        self.hands_on[caller].add(callee)
        if where is not None:
            self.handed_positions[caller].add((callee, where, origins))

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
        directly, or handing on values of its own parameters from a function that is
        fed at one of those parameters."""
        out = {callee: set(places) for callee, places in self.positions.items()}
        changed = True
        while changed:
            changed = False
            for caller, handed in self.handed_positions.items():
                fed_at = out.get(caller)
                if not fed_at:
                    continue
                for callee, where, origins in handed:
                    if where in out.get(callee, ()):
                        continue
                    if origins is None or meets(origins, fed_at):
                        out.setdefault(callee, set()).add(where)
                        changed = True
        return out
