"""The function around a line of the user's source, and the backward() call on it.

Shared by the gradient-path analysis (AD301) and the backward-twice analysis (AD302):
a `Scope` lists a function's assignments and parent links; the other helpers find the
live frame of a call site, the expression `backward()` was called on, and its tensors.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import threading
from types import FrameType

import torch

from autograd_doctor.recording.frames import Site, frame_locals, is_internal_file
from autograd_doctor.diagnosis.source import call_name, parse_file

# The most autograd nodes any walk of a graph visits.
MAX_NODES = 20_000


class Scope:
    """The function (or module) around a line: its assignments and parent links."""

    def __init__(self, filename: str, line: int):
        self.filename = filename
        self.tree = parse_file(filename)
        self.parents: dict[ast.AST, ast.AST] = {}
        self.node: ast.AST | None = None
        self.assignments: list[tuple[ast.stmt, set[str], ast.AST]] = []
        if self.tree is None:
            return
        for parent in ast.walk(self.tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        scope: ast.AST = self.tree
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
                if scope is self.tree or node.lineno >= scope.lineno:
                    scope = node
        self.node = scope
        self._collect(scope)

    def _collect(self, scope: ast.AST) -> None:
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(node, ast.Assign):
                names = set()
                for target in node.targets:
                    names |= stored_names(target)
                self.assignments.append((node, names, node.value))
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                value = node.value
                if isinstance(node, ast.AugAssign):
                    value = ast.BinOp(left=ast.Name(id=root_name(node.target) or "", ctx=ast.Load()),
                                      op=node.op, right=node.value)
                    ast.copy_location(value, node.value)
                self.assignments.append((node, stored_names(node.target), value))
            stack.extend(ast.iter_child_nodes(node))
        self.assignments.sort(key=lambda item: item[0].lineno)

    def latest_assignment(self, name: str, before_line: int):
        best = None
        for statement, names, value in self.assignments:
            if name in names and statement.lineno < before_line:
                best = (statement, value)
        return best

    def statement_at(self, line: int) -> ast.stmt | None:
        best = None
        for node in ast.walk(self.node or self.tree):
            if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While,
                                                                    ast.If, ast.With, ast.Try)):
                if node.lineno <= line <= node.end_lineno and (best is None or node.lineno >= best.lineno):
                    best = node
        return best

    def enclosing_loop(self, statement: ast.AST) -> ast.AST | None:
        node = self.parents.get(statement)
        while node is not None and node is not self.node:
            if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
                return node
            node = self.parents.get(node)
        return None


def block_holding(tree: ast.AST, statement: ast.stmt) -> list | None:
    """The list of statements (a body, an else, a finally) below `tree` that holds `statement`;
    None when none does."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statement in statements:
                return statements
    return None


def stored_names(target: ast.AST) -> set[str]:
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        names = set()
        for element in target.elts:
            names |= stored_names(element)
        return names
    if isinstance(target, ast.Starred):
        return stored_names(target.value)
    return set()


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def loaded_names(expr: ast.AST) -> list[str]:
    """Names read by `expr`, roots of attribute chains included (`model` in `model.fc(x)`)."""
    names = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            names.append(node.id)
    return [n for n in names if n not in {"torch", "F", "nn", "np", "numpy", "math", "self"} or n == "self"]


def live_frame(site: Site | None) -> FrameType | None:
    if site is None:
        return None
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is site.code:
            return frame
        frame = frame.f_back
    return None


def frame_values(frame: FrameType) -> dict:
    values = dict(frame.f_globals)
    values.update(frame_locals(frame))
    return values


def backward_call_node(statement: ast.stmt) -> ast.Call | None:
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and call_name(node) in ("backward", "grad"):
            return node
    return None


def root_expression(statement: ast.stmt) -> ast.AST | None:
    call = backward_call_node(statement)
    if call is None:
        return None
    if call_name(call) == "backward" and isinstance(call.func, ast.Attribute) and not (
            isinstance(call.func.value, ast.Attribute) and call.func.value.attr == "autograd"):
        return call.func.value
    return call.args[0] if call.args else None


def backward_roots(args: tuple, kwargs: dict) -> list[torch.Tensor]:
    first = args[0] if args else kwargs.get("tensors", kwargs.get("outputs"))
    if isinstance(first, torch.Tensor):
        return [first]
    if isinstance(first, (list, tuple)):
        return [t for t in first if isinstance(t, torch.Tensor)]
    return []


def reached_leaves(roots: list[torch.Tensor], max_nodes: int = MAX_NODES) -> set[int]:
    """Ids of the leaves (AccumulateGrad variables) the graphs of `roots` reach. The links
    stay after backward() frees a graph's saved tensors, so this works on freed graphs too."""
    return leaves_below([t.grad_fn for t in roots if t.grad_fn is not None], max_nodes)[0]


def leaves_below(nodes: list, max_nodes: int = MAX_NODES, avoid=()) -> tuple[set[int], bool]:
    """(ids of the leaves reached from the graph `nodes` without passing through a node of
    `avoid`, whether the walk finished within `max_nodes` nodes: if not, the ids are a part)."""
    walked, finished = graph_nodes(nodes, max_nodes, avoid)
    return {id(node.variable) for node in walked if getattr(node, "variable", None) is not None}, finished


# While the checks after one backward() run (`shared_graph_walks`), the walks they make of its
# graph, by the ids of the nodes walked from: per thread, dropped when the checks end.
_shared_walks = threading.local()


@contextlib.contextmanager
def shared_graph_walks():
    """Within the block, walks of the graph below the same nodes are made once and shared: several
    checks after a backward() walk its whole graph (AD218, AD220, AD301), and a node's links
    never change once it exists. The nodes walked from must stay alive for the block (the
    backward() call's own arguments), so that their ids name the same nodes."""
    outer = getattr(_shared_walks, "walks", None)
    _shared_walks.walks = {}
    try:
        yield
    finally:
        _shared_walks.walks = outer


def graph_nodes(nodes: list, max_nodes: int = MAX_NODES, avoid=()) -> tuple[list, bool]:
    """(the nodes of the graph below `nodes`, not passing through a node of `avoid`, whether the
    walk finished within `max_nodes` nodes). The links stay after backward() frees a graph."""
    walks = getattr(_shared_walks, "walks", None)
    if walks is None:
        return _walk_graph(nodes, max_nodes, avoid)
    key = (tuple(map(id, nodes)), max_nodes, tuple(map(id, avoid)))
    found = walks.get(key)
    if found is None:
        found = walks[key] = _walk_graph(nodes, max_nodes, avoid)
    return list(found[0]), found[1]


def _walk_graph(nodes: list, max_nodes: int, avoid) -> tuple[list, bool]:
    walked = []
    seen = set(avoid)
    limit = max_nodes + len(seen)
    queue = [node for node in nodes if node not in seen]
    while queue and len(seen) < limit:
        node = queue.pop()
        if node in seen:
            continue
        seen.add(node)
        walked.append(node)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return walked, not queue


def user_class_file(value) -> str | None:
    """The file of the user's code that defines `value`'s class, or None (a library's class,
    torch's, or one defined where no file says)."""
    defined_in = getattr(sys.modules.get(type(value).__module__), "__file__", None)
    return defined_in if defined_in is not None and not is_internal_file(defined_in) else None


def user_class_definitions(value) -> tuple[str | None, list[ast.ClassDef]]:
    """The file of the user's code that defines `value`'s class, and the `class` statements of
    that name in it (usually one); (None, []) for a library's class or a file that cannot be read."""
    filename = user_class_file(value)
    tree = parse_file(filename) if filename is not None else None
    if tree is None:
        return None, []
    name = type(value).__name__
    return filename, [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == name]


def user_files_around(call) -> list[str]:
    """The files of the user's frames around a backward() call, then those of the user's module
    classes bound there (a forward in another file): where the source of a graph's ops is read."""
    files: list[str] = []
    for site in (call.stack if call is not None else ()):
        if site.filename not in files and not is_internal_file(site.filename):
            files.append(site.filename)
        frame = live_frame(site)
        if frame is None:
            continue
        for value in list(frame_values(frame).values()):
            if isinstance(value, torch.nn.Module):
                for module in value.modules():
                    defined_in = user_class_file(module)
                    if defined_in is not None and defined_in not in files:
                        files.append(defined_in)
    return files[:8]


def flows_to_return(function: ast.AST, statement: ast.stmt, carriers: set, binds, admits=None) -> bool:
    """Whether what `function` returns is computed from `carriers` (names `statement` bound),
    following the assignments after `statement`: each one that reads a carrier makes the names
    `binds(node)` gives carriers too. `admits(value, carriers)`, when given, must hold for every
    such step (what else the step may read)."""
    later = sorted((node for node in ast.walk(function) if isinstance(node, (ast.Assign, ast.AugAssign, ast.Return))
                    and node.lineno > statement.end_lineno), key=lambda node: node.lineno)
    for node in later:
        if node.value is None or not {name.id for name in ast.walk(node.value) if isinstance(name, ast.Name)} & carriers:
            continue
        if admits is not None and not admits(node.value, carriers):
            return False
        if isinstance(node, ast.Return):
            return True
        carriers = carriers | binds(node)
    return False
