"""Functions that the file itself only ever calls without gradients.

fairseq's ensemble wrapper decorates `forward_decoder` with `@torch.no_grad()`
and splits its work into `forward_word_del`, `forward_mask_ins`, ...: those
helpers run without gradients too, although nothing at their definition says
so.  A function (or method) counts as running without gradients when every
mention of its name in the file is a call from code that runs without
gradients: under `with torch.no_grad():` (or `inference_mode`,
`set_grad_enabled(False)`), in a function decorated with it, or in another such
function.  Names are matched
without resolving them (`self.f(...)`, `obj.f(...)` and `f(...)` are all
mentions of `f`), so a mention anywhere else, or a mention that is not a call
(a callback, an attribute of the same name), keeps the function checked.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from autograd_doctor.lint import names as N
from autograd_doctor.lint.walk import FastVisitor, walk_nodes

# Entry points that other code calls (nn.Module.__call__, Lightning, the runtime).
_ENTRY_POINTS = frozenset({"forward", "__call__", "training_step", "main"})
_SWITCHES = ("no_grad", "inference_mode", "set_grad_enabled")


def switches_gradients(source: str) -> bool:
    """Whether the text can switch gradients off at all (else no walk is needed)."""
    return any(word in source for word in _SWITCHES)


def grad_off_callees(walk: "_Mentions | None") -> frozenset:
    """Names of the functions defined in the walked tree that it only calls without
    gradients; ``walk`` is ``mentions(tree)``, or None when nothing switches them off."""
    if walk is None:
        return frozenset()
    # Greatest fixpoint: every mention is a call from grad-off code or from a candidate.
    candidates = {name for name in walk.defined if walk.mentions.get(name)
                  and not name.startswith("__") and name not in _ENTRY_POINTS}
    changed = True
    while changed:
        changed = False
        for name in sorted(candidates):
            if not all(call and (off or caller in candidates)
                       for call, off, caller in walk.mentions[name]):
                candidates.discard(name)
                changed = True
    # Least fixpoint inside it: reached from code that surely runs without gradients
    # (a function mentioned only by itself, or by a cycle of its own, is not).
    reached: set = set()
    changed = True
    while changed:
        changed = False
        for name in sorted(candidates - reached):
            if any(off or caller in reached for _, off, caller in walk.mentions[name]):
                reached.add(name)
                changed = True
    return frozenset(reached)


def grad_off_code_calls_own_function(tree: ast.Module) -> bool:
    """Whether code that runs without gradients (a `with torch.no_grad():` block, a
    function decorated with it) holds a call `f(...)` / `x.f(...)` of a name ``f`` that
    the file defines with `def`.  ``grad_off_callees`` and ``defaults.grad_off_branches``
    each need such a call (a name called from grad-off code), so where there is none
    the walk of every node that ``mentions`` makes is not needed: most files that say
    `no_grad` only run torch's own functions under it.  Statements only, then the
    grad-off blocks' nodes (a superset of what ``mentions`` counts as grad-off)."""
    from autograd_doctor.lint.arguments import nested_statements  # (arguments.py does not import this module)
    aliases = _top_level_aliases(tree)
    defined, blocks = set(), []
    for stmt in nested_statements(tree.body):
        kind = stmt.__class__
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            defined.add(stmt.name)
            if any(N.qualified_name(d.func if isinstance(d, ast.Call) else d, aliases) in N.GRAD_OFF_CONTEXTS
                   for d in stmt.decorator_list):
                blocks.append(stmt.body)
        elif kind is ast.With or kind is ast.AsyncWith:
            if any(N.turns_grad_off(N.qualified_name(
                    item.context_expr.func if isinstance(item.context_expr, ast.Call) else item.context_expr,
                    aliases), item.context_expr) for item in stmt.items):
                blocks.append(stmt.body)
    if not defined:
        return False
    for body in blocks:
        for stmt in body:
            for node in walk_nodes(stmt):
                if node.__class__ is ast.Call:
                    func = node.func
                    name = func.id if isinstance(func, ast.Name) else \
                        func.attr if isinstance(func, ast.Attribute) else None
                    if name in defined:
                        return True
    return False


def mentions(tree: ast.Module) -> "_Mentions":
    walk = _Mentions(_top_level_aliases(tree))
    walk.visit(tree)
    return walk


def _top_level_aliases(tree: ast.Module) -> dict:
    aliases = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


class _Mentions(FastVisitor):
    """Every mention of a name: (is it called, in grad-off code, the enclosing function)."""

    def __init__(self, aliases: dict):
        super().__init__()
        self.aliases = aliases
        self.defined: set = set()
        self.mentions: dict = defaultdict(list)
        self.function: str | None = None
        self.grad_off = False
        self.called: set = set()
        self.calls: dict = defaultdict(list)
        self.definitions: dict = defaultdict(list)

    def qualname(self, node) -> str | None:
        return N.qualified_name(node.func if isinstance(node, ast.Call) else node, self.aliases)

    def visit_FunctionDef(self, node):
        self.defined.add(node.name)
        self.definitions[node.name].append(node)
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)
        off = self.grad_off or any(
            self.qualname(d) in N.GRAD_OFF_CONTEXTS for d in node.decorator_list)
        outer = self.function, self.grad_off
        self.function, self.grad_off = node.name, off
        for stmt in node.body:
            self.visit(stmt)
        self.function, self.grad_off = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_With(self, node):
        off = False
        for item in node.items:
            self.visit(item)
            expr = item.context_expr
            if N.turns_grad_off(self.qualname(expr), expr):
                off = True
        outer = self.grad_off
        self.grad_off = outer or off
        for stmt in node.body:
            self.visit(stmt)
        self.grad_off = outer

    visit_AsyncWith = visit_With

    def visit_Lambda(self, node):
        outer = self.function, self.grad_off  # a lambda may be called anywhere later
        self.function, self.grad_off = None, False
        self.generic_visit(node)
        self.function, self.grad_off = outer

    def visit_Call(self, node):
        self.called.add(id(node.func))
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is not None:  # the calls themselves, for the arguments they pass (defaults.py)
            self.calls[name].append((node, self.grad_off, self.function))
        self.generic_visit(node)

    def visit_Name(self, node):
        self.mentions[node.id].append((id(node) in self.called and isinstance(node.ctx, ast.Load),
                                       self.grad_off, self.function))

    def visit_Attribute(self, node):
        self.mentions[node.attr].append((id(node) in self.called and isinstance(node.ctx, ast.Load),
                                         self.grad_off, self.function))
        self.visit(node.value)
