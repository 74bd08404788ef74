"""What the single pass records per function, in source order."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field

from autograd_doctor.lint.findings import Fix


@dataclass
class Write:
    seq: int
    name: str
    node: ast.AST
    how: str
    grad_on: bool
    fix: Fix | None = None
    via: str = ""           # "detach" / "expand" when written through such a chain
    via_source: str = ""    # the detached name for direct chains
    detached_from: str = ""  # `name = src.detach()` binding live at the write
    expanded: bool = False   # `name = x.expand(...)` binding live at the write


@dataclass
class Scope:
    name: str
    grad_off: bool
    module_class: str | None = None     # enclosing nn.Module subclass, if a method
    tensors: set = field(default_factory=set)
    consts: set = field(default_factory=set)        # tensors that cannot require grad
    uses: dict = field(default_factory=lambda: defaultdict(list))
    binds: dict = field(default_factory=lambda: defaultdict(list))
    saves: dict = field(default_factory=lambda: defaultdict(list))  # name -> [(seq, op, how, node)]
    writes: list = field(default_factory=list)
    detached: dict = field(default_factory=dict)   # name -> (source name, seq)
    expanded: dict = field(default_factory=dict)   # name -> seq
    inplace_calls: list = field(default_factory=list)  # (seq, input name, node, fix)
    retain_backwards: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    backwards: list = field(default_factory=list)
    loss_lists: list = field(default_factory=list)  # (name, node, fix)
    backward_names: set = field(default_factory=set)
    loops: list = field(default_factory=list)
    branches: list = field(default_factory=list)   # (body start, body end, else end) seqs
    data_uses: list = field(default_factory=list)  # ADL004 candidates: (node, message, fix)

    def exclusive(self, a: int, b: int) -> bool:
        """True when seqs ``a`` and ``b`` are in different branches of one `if`."""
        for start, mid, end in self.branches:
            if (start <= a < mid and mid <= b < end) or (start <= b < mid and mid <= a < end):
                return True
        return False


@dataclass
class Loop:
    stores: list = field(default_factory=list)   # (base name, node, stored the name itself)
    written: set = field(default_factory=set)
    bound: set = field(default_factory=set)
