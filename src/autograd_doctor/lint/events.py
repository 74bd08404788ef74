"""What the single pass records per function, in source order, and the
questions the rules ask about it (was the name re-bound in between? is it read
afterwards? can control flow from here to there?).

Every event carries a sequence number: the walk's position in source order.
Branches of an `if`/`else` are recorded as seq ranges, so two events in
different branches are known never to happen in one run, and blocks that end
in `return`/`continue`/`break`/`raise` as ranges that never fall through.
"""

from __future__ import annotations

import ast
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field


@dataclass
class Write:
    """An in-place write to (a view of) the tensor bound to ``name``."""

    seq: int
    name: str
    node: ast.AST
    how: str
    grad_on: bool
    # how a fix could rewrite the write (the rule that reports it builds the fix):
    # ("augmented",) `name op= v`; ("indexed", base) `base[i] = v`; ("method",) a
    # `name.op_(...)` on a tensor name; ("functional" | "module", the `inplace=True`
    # keyword, or None); () none
    rewrite: tuple = ()
    via: str = ""            # "detach" / "expand" when written through such a chain
    via_source: str = ""     # the detached name for direct chains
    detached_from: str = ""  # `name = src.detach()` binding live at the write
    # seq of the `name = x.expand(...)` binding live at the write in source order
    # (0: none); ADL012 asks whether it is on a path to the write
    expanded_at: int = 0
    through_data: bool = False  # written through `.data` (invisible to autograd)
    grad_leaf: bool = False  # the name is a leaf that requires grad
    split_from: str = ""     # the name came from chunk/split/unbind of a graph tensor
    # the name is the output of a custom autograd Function that returns its input as
    # is (custom_functions.py): its text, `Reduce.apply` / `self.grl`
    function_view: str = ""
    # written by a same-file helper's in-place write to its untyped parameter, recorded
    # at the call (summaries.py); ADL015 reports such writes inside the helper instead
    untyped_helper: bool = False
    # written through this alias name (`q = x; q += v` writes x through `q`), "" when not
    alias: str = ""


@dataclass
class Scope:
    """One function (or the module, or a class body) and its events.

    Its containers (``init=False``) are filled by the walk, never passed to the
    constructor, which stays cheap: a scope is made for every function linted."""

    name: str
    grad_off: bool
    module_class: str | None = None     # enclosing nn.Module subclass, if a method
    owner_class: str | None = None      # enclosing class of any kind, if a method (summaries.py)
    function_node: object = None        # the `def` walked (statements.attribute_aliases)
    # Lightning's training_step / the Trainer's compute_loss: the framework
    # backpropagates the returned loss
    framework_backward: bool = False
    # a Distribution's log_prob / rsample...: callers differentiate the result
    returns_to_callers: bool = False
    top_level: bool = False             # a function defined at module level
    # parameters whose default is an optimizer class (`optimizer_class=optim.Adam`)
    optimizer_parameters: frozenset = frozenset()
    # Facts about names, joined at the end of `if`/`else` (see Checker.visit_If).
    # seqs of calls of same-file functions that run a backward pass (backward_helpers.py)
    helper_backwards: list = field(default_factory=list, init=False)
    tensors: set = field(default_factory=set, init=False)
    consts: set = field(default_factory=set, init=False)        # tensors that cannot require grad
    graph: set = field(default_factory=set, init=False)         # tensors known to carry a graph
    grad_leaves: set = field(default_factory=set, init=False)   # leaves known to require grad
    graph_arguments: set = field(default_factory=set, init=False)  # forward()'s tensor arguments, not re-bound
    graph_saves: set = field(default_factory=set, init=False)   # seqs of saves whose op result carries a graph
    # seqs of bindings that make a name an int: `for i in range(n)`, `for i, x in enumerate(...)`
    int_bindings: set = field(default_factory=set, init=False)
    # `for layer in self.layers:` statements (ids) over a container of layers this class built
    layer_loops: set = field(default_factory=set, init=False)
    # The graph_arguments are only `Tensor`-annotated parameters of a helper in a file
    # that trains: evidence only if a call in the file passes one a graph tensor
    # (``graph_callers.py``); the saves whose graph comes from nothing else.
    provisional: bool = False
    provisional_saves: set = field(default_factory=set, init=False)
    # which of the function's parameters (their names and call positions) a graph
    # argument and a provisional save come from: its graph is evidence only where a
    # call passes one at one of those (name -> origins, seq -> origins)
    argument_origins: dict = field(default_factory=dict, init=False)
    all_argument_origins: frozenset = frozenset()
    provisional_origins: dict = field(default_factory=dict, init=False)
    # Untyped parameters of a function in a file that trains (no annotation, not known
    # to be tensors), and the tensors computed from them, not re-bound, each with the
    # positions and names of the parameters it comes from: their graph is evidence only
    # where a call in the file passes a graph at one of those; the saves whose graph
    # comes from nothing else (seq -> those positions)
    untyped_arguments: dict = field(default_factory=dict, init=False)
    untyped_saves: dict = field(default_factory=dict, init=False)
    evidence_key: str = ""  # what graph_callers knows it by: `f`, or `Cls.forward`
    parameters: frozenset = frozenset()  # the function's parameter names
    # `p -= t` on a parameter not known to be a tensor, with a tensor value: an
    # in-place write when the caller passes a tensor (summaries.py); (seq, name, node)
    parameter_aug_writes: list = field(default_factory=list, init=False)
    # a parameter not known to be a tensor passed to an op that keeps that input for
    # backward: kept when the caller passes a tensor (summaries.py); (seq, name, key, how, node)
    parameter_saves: list = field(default_factory=list, init=False)
    # `p.mul_(t)` on such a parameter: written in place when the caller passes a tensor
    # (ADL001 reports it inside the function when callers pass a graph there); (seq, name, node)
    parameter_method_writes: list = field(default_factory=list, init=False)
    # `p[i] = v` on such a parameter (p may be a dict: a write only where a caller passes
    # a tensor); (seq, name, node)
    parameter_index_writes: list = field(default_factory=list, init=False)
    arguments: object = None  # the function's `ast.arguments` (positions of its parameters)
    function: object = None  # the function's own `ast.FunctionDef` (None for a module or class body)
    # past an `if` that returns for a call at the defaults (fallbacks.py): writes here
    # count as made without gradients
    default_returned: bool = False
    # forward()'s arguments taken for tensors only because forward() receives them
    # (no annotation); each maps to whether the function only ever indexes it with
    # integer constants (``Statements.indexed_container``), once asked
    assumed_tensor_arguments: dict = field(default_factory=dict, init=False)
    class_methods: frozenset = frozenset()  # a method's: the names of its class's methods
    class_bases: tuple = ()  # a method's: its class's bases as the file imports them (`core.utils.Trainer`)
    unnamed_bases: bool = False  # a method's class derives from a class the imports do not name
    # name -> the `chunk`/`split`/`unbind` call it came from (a multi-view output)
    split_views: dict = field(default_factory=dict, init=False)
    # name -> the call of a custom Function returning its input as is that made it
    # (`y = Reduce.apply(x)`, `y = self.grl(x)`): a view that may not be written in place
    function_views: dict = field(default_factory=dict, init=False)
    # views split from an untyped parameter (`a, b = torch.split(x, 1)` in `def f(x)`): the
    # parameter's name; ADL015 reports a write to one only where a caller passes a graph there
    provisional_splits: dict = field(default_factory=dict, init=False)
    # (name, seq of its binding by a `for` target) -> the iterable its values come from:
    # `for pred, gold in zip(preds, golds)` binds `pred` to elements of `preds` (ADL003)
    iterated: dict = field(default_factory=dict, init=False)
    # calls of plain names that are no imported callable, with gradients on: (seq, call);
    # ADL003 reads what a same-file function's callers pass it
    name_calls: list = field(default_factory=list, init=False)
    parameter_vars: set = field(default_factory=set, init=False)  # `for p in model.parameters()` loop variables
    parameter_var_modules: dict = field(default_factory=dict, init=False)  # such a variable -> `model` (its text)
    # name -> (base name, "data" / "detach" / "view"): `s = t.data`, `v = t[0]` share t's memory
    alias_of: dict = field(default_factory=dict, init=False)
    detached: dict = field(default_factory=dict, init=False)    # name -> (source name, seq)
    view_rebinds: set = field(default_factory=set, init=False)  # seqs of `x = x.view(...)`: x's memory kept
    expanded: dict = field(default_factory=dict, init=False)    # name -> seq
    grad_free_expansions: set = field(default_factory=set, init=False)  # seqs of such bindings with no graph
    # Events.
    uses: dict = field(default_factory=lambda: defaultdict(list), init=False)
    binds: dict = field(default_factory=lambda: defaultdict(list), init=False)
    bind_values: dict = field(default_factory=lambda: defaultdict(list), init=False)  # name -> [(seq, value, grad_off)]
    saves: dict = field(default_factory=lambda: defaultdict(list), init=False)  # name -> [(seq, op, how, node)]
    writes: list = field(default_factory=list, init=False)
    inplace_calls: list = field(default_factory=list, init=False)  # (seq, input name, node, rewrite, module)
    retain_backwards: list = field(default_factory=list, init=False)
    steps: list = field(default_factory=list, init=False)      # (seq, node, optimizer text)
    # writes of a module's parameters in place other than a step: `model.load_state_dict(
    # ...)`, `p.copy_(q)` for `p` in `model.parameters()`; (seq, node, module text)
    parameter_loads: list = field(default_factory=list, init=False)
    backwards: list = field(default_factory=list, init=False)
    backward_receivers: list = field(default_factory=list, init=False)  # (seq, node, receiver expression)
    # a same-file method that steps an optimizer or backpropagates through its
    # arguments, called here (summaries.py; ADL003 only): (seq, the method's step
    # node, optimizer text, the call) and (seq, the call, the argument)
    helper_steps: list = field(default_factory=list, init=False)
    # `optimizer.apply(gradients, weights)`, `optimizer.update()` of a hand-written
    # optimizer of the file (TrainingFacts.update_methods; ADL018 only): (seq, node, text)
    applied_updates: list = field(default_factory=list, init=False)
    helper_backward_receivers: list = field(default_factory=list, init=False)
    # a same-class method called here whose backward pass goes through attributes of
    # `self` set elsewhere: (seq, the method's backward call, attribute names)
    helper_attribute_backwards: list = field(default_factory=list, init=False)
    zero_grads: list = field(default_factory=list, init=False)  # seqs of `zero_grad()` / `.grad = None`
    zero_grad_receivers: list = field(default_factory=list, init=False)  # (seq, text) of each `x.zero_grad()`
    zero_grad_calls: dict = field(default_factory=dict, init=False)  # seq -> that `x.zero_grad()` call
    imported_calls: list = field(default_factory=list, init=False)  # (seq, qualname) of calls in loops
    self_calls: list = field(default_factory=list, init=False)  # (seq, method) of `self.method(...)` calls in loops
    backward_names: set = field(default_factory=set, init=False)
    loops: list = field(default_factory=list, init=False)
    finished_loops: list = field(default_factory=list, init=False)  # (start seq, end seq) of every loop
    loop_headers: dict = field(default_factory=dict, init=False)  # loop start seq -> seq before its header's reads
    # local list name -> [(seq, argument)] of each `name.append(<argument>)`: the layers
    # that `nn.Sequential(*name)` will chain (modules.py's sequential neighbours)
    appended: dict = field(default_factory=lambda: defaultdict(list), init=False)
    detached_in_place: dict = field(default_factory=lambda: defaultdict(list), init=False)  # name -> seqs of `name.detach_()`
    branches: list = field(default_factory=list, init=False)   # (body start, body end, else end) seqs
    # (body start, body end, loop start) of each `if i != len(seq) - 1:` body in a
    # loop counting `i` over `seq`: it never runs on the loop's last iteration
    last_iteration_skips: list = field(default_factory=list, init=False)
    running_loops: set = field(default_factory=set, init=False)  # start seqs of loops that run (Loop.runs)
    jumps: list = field(default_factory=list, init=False)      # (start, end) seqs of blocks that end with a jump
    reported: set = field(default_factory=set, init=False)     # ids of nodes a rule already reported
    return_values: list = field(default_factory=list, init=False)  # (seq, value) of each `return value`
    # what a rule's hooks noted in this function, for its check_scope: code -> items
    candidates: dict = field(default_factory=lambda: defaultdict(list), init=False)

    def note(self, code: str, item) -> None:
        """Keep ``item`` for rule ``code``'s ``check_scope`` (a hook sees one node;
        whether to report may need the whole function, e.g. a later backward())."""
        self.candidates[code].append(item)

    def noted(self, code: str):
        """What rule ``code``'s hooks noted in this function, in source order."""
        return self.candidates.get(code, ())

    # ----- control flow ---------------------------------------------------
    def has_gradients(self, checker) -> bool:
        """Whether this function plausibly runs with tensors that carry a graph: a
        method of an nn.Module, code in a file that calls backward(), or a function
        with a graph tensor or a leaf that requires grad of its own.  A helper that
        post-processes outputs (detection boxes, cache updates) has none of these."""
        return bool(self.module_class or checker.file.trains or self.graph or self.grad_leaves
                    or self.backwards or self.retain_backwards or self.framework_backward
                    or self.returns_to_callers)

    def reached_only_through_returns(self, checker) -> bool:
        """The only evidence that a backward reaches this function is that it returns
        a differentiable result to unknown callers (`Distribution.log_prob`): only
        what flows into a returned value is surely backpropagated."""
        return self.returns_to_callers and not (
            self.module_class or checker.file.trains or self.graph or self.grad_leaves
            or self.backwards or self.retain_backwards or self.framework_backward)

    def exclusive(self, a: int, b: int) -> bool:
        """True when seqs ``a`` and ``b`` are in different branches of one `if`."""
        for start, mid, end in self.branches:
            if (start <= a < mid and mid <= b < end) or (start <= b < mid and mid <= a < end):
                return True
        return False

    def run_together(self, a: int, b: int) -> bool:
        """Seqs ``a`` < ``b`` run on the same paths: no `if` branch, loop body or
        block that ends with a jump begins or ends between them."""
        if any((s < a < m) != (s < b < m) or (m < a < e) != (m < b < e) for s, m, e in self.branches):
            return False
        if any((s < a < e) != (s < b < e) for s, e in self.finished_loops):
            return False
        return not any(a < s < b or a < e < b for s, e in self.jumps)

    def reaches(self, a: int, b: int) -> bool:
        """False when ``a`` is in a block that ends with return/continue/break/raise
        and ``b`` comes after that block: control never flows from ``a`` to ``b``."""
        return not any(start <= a < end <= b for start, end in self.jumps)

    # ----- names ----------------------------------------------------------
    def bound_between(self, name: str, lo: int, hi: int) -> bool:
        b = self.binds.get(name, ())
        i = bisect_right(b, lo)
        return i < len(b) and b[i] < hi

    def used_after(self, name: str, seq: int) -> int | None:
        """The seq of the first read of ``name`` after ``seq`` that still sees the
        value it had at ``seq`` (no re-binding on the way), else None."""
        u = self.uses.get(name, ())
        b = self.binds.get(name, ())
        j = bisect_right(b, seq)
        next_bind = b[j] if j < len(b) else None
        for use in u[bisect_right(u, seq):]:
            if next_bind is not None and next_bind < use and not self.exclusive(seq, next_bind):
                return None
            if not self.exclusive(seq, use) and self.reaches(seq, use):
                return use
        return None

    def rebound_on_every_path(self, name: str, lo: int, hi: int) -> bool:
        """True when every path from ``lo`` to ``hi`` re-binds ``name`` (or leaves):
        a re-binding inside an `if` branch or a loop body kills only if the other
        branch re-binds too (a loop body may not run)."""
        # a re-binding in the other branch of an `if` around ``hi`` is on no path to it
        binds = [b for b in self.binds.get(name, ()) if lo < b < hi and not self.exclusive(b, hi)
                 and b not in self.view_rebinds]
        if not binds:
            return False
        blocks = [(s, m, e) for s, m, e in self.branches if lo < s and e <= hi]
        # a loop's body may not run, unless it iterates over the class's own layers
        blocks += [(s, e, e) for s, e in self.finished_loops if lo < s and e <= hi
                   and s not in self.running_loops]

        def covers(start: int, end: int) -> bool:
            if any(s <= start and end <= e for s, e in self.jumps):
                return True  # this path leaves before reaching `hi`
            inner = [(s, m, e) for s, m, e in blocks if start <= s and e <= end
                     and not any(s2 <= s and e <= e2 and (s2, e2) != (s, e) and start <= s2
                                 for s2, _, e2 in blocks)]
            for b in binds:
                if start <= b < end and not any(s <= b < e for s, _, e in inner):
                    return True
            # a loop's range (s, e, e) never covers (its body may not run): tested
            # first, since the loop's own range would recurse into itself
            return any(m < e and covers(s, m) and covers(m, e) for s, m, e in inner)

        return covers(lo + 1, hi)

    def backward_between(self, lo: int, hi: int) -> bool:
        """A `backward()` (without retain_graph) ran between ``lo`` and ``hi``: the
        graph, and what it saved, is gone by then."""
        return any(lo < s < hi and not self.exclusive(s, hi) for s, _ in self.backwards)

    def binding(self, name: str, at: int):
        """The (seq, value, grad_off) binding of ``name`` live at ``at``."""
        for entry in reversed(self.bind_values.get(name, ())):
            if entry[0] < at and not self.exclusive(entry[0], at):
                return entry
        return None


@dataclass
class Loop:
    start: int = 0
    # `for i, x in enumerate(seq)` / `for i in range(n)`: (the counter's name, the
    # iteration count as an expression: `len(seq)`, `n`); () for other loops
    counter: tuple = ()
    # `for layer in self.layers:` over a container of layers this class built: a
    # network's layers are there to be run, so the body runs at least once
    runs: bool = False
    # (base name, node, stored the name itself, order, the leading index's name: `i` of
    # `x[i, 0]`, "" for another value)
    stores: list = field(default_factory=list)
    written: set = field(default_factory=set)
    # (name, order, the leading index's name as for `stores`) of each in-place write in
    # the loop, nested loops' included
    row_writes: list = field(default_factory=list)
    bound: set = field(default_factory=set)
