"""A faster ``ast.NodeVisitor`` for the linter's walks.

``ast.NodeVisitor.visit`` looks its handler up by name on every node, and its
``generic_visit`` goes through ``ast.iter_fields``, a generator.  On a large
file the walk meets hundreds of thousands of nodes, so both costs show in the
linter's time (docs/lint.md, "Performance").  This visitor keeps one handler
per node class and reads the fields directly, each class's fields that can hold
a node only; what it visits, and in what order, is what ``ast.NodeVisitor``
visits, less the nodes that cannot hold other nodes (constants, contexts,
operators, import aliases), which are not walked into at all.
"""

from __future__ import annotations

import ast
from collections import deque


def _classes_without_children() -> frozenset:
    """Node classes that can hold no other node: ``Constant`` (its value is a
    Python object), the contexts ``Load``/``Store``/``Del`` and the operators."""
    found, todo = set(), [ast.AST]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls is not ast.AST and not cls._fields:
            found.add(cls)
    return frozenset(found | {ast.Constant})


_WITHOUT_CHILDREN = _classes_without_children()


# Fields that never hold a node (identifiers, flags, levels, comments), whatever the class.
_NAME_FIELDS = frozenset({"id", "attr", "arg", "name", "module", "asname", "type_comment", "level", "kind",
                          "conversion", "is_async", "simple", "kwd_attrs"})
# Fields that hold only nodes without children: a context (`Load`), an operator (`Add`), an import's
# aliases. No visitor here handles those classes, so a walk need not call into them.
_CHILDLESS_FIELDS = frozenset({"ctx", "op", "names"})


def _fields_plan(cls: type, leave_out: frozenset, plans: dict) -> tuple:
    if cls.__name__ == "TypeAlias":  # Python 3.12's `type X = ...`: its `name` is a Name node
        leave_out = leave_out - {"name"}
    plan = plans[cls] = tuple(name for name in cls._fields if name not in leave_out)
    return plan


_VISITED_FIELDS: dict = {}
_CHILD_FIELDS: dict = {}
_SKIPPED_BY_VISITS = _NAME_FIELDS | _CHILDLESS_FIELDS


class FastVisitor:
    """``ast.NodeVisitor`` with a handler cache and a field loop without generators.
    The generic walk does not call into contexts, operators and import aliases (no
    visitor here has a handler for them)."""

    def __init__(self):
        self._handlers: dict[type, object] = {}

    def visit(self, node):
        handler = self._handlers.get(node.__class__)
        if handler is None:
            handler = getattr(self, "visit_" + node.__class__.__name__, None)
            if handler is None:  # a node without children needs no generic walk
                handler = _nothing if node.__class__ in _WITHOUT_CHILDREN else self.generic_visit
            self._handlers[node.__class__] = handler
        return handler(node)

    def generic_visit(self, node):
        # Only the grammar's fields: other code in the process may have hung extra
        # attributes (e.g. `.parent`) on shared nodes such as the `ast.Load()` singleton.
        fields = _VISITED_FIELDS.get(node.__class__)
        if fields is None:
            fields = _fields_plan(node.__class__, _SKIPPED_BY_VISITS, _VISITED_FIELDS)
        for field_name in fields:
            value = getattr(node, field_name, None)
            if value.__class__ is list:
                for item in value:
                    if item is not None:  # a list field holds nodes, or None (`{**d}`'s key, a bare `*` default)
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)


def _nothing(node):
    return None


def child_nodes(node) -> list:
    """``list(ast.iter_child_nodes(node))``, in the same order, without its generators."""
    children = []
    _push_children(node, children.append)
    return children


def walk_nodes(node):
    """``ast.walk(node)``: the same nodes in the same (breadth-first) order, without
    ``ast.iter_child_nodes``' two generators per node (a third less time)."""
    todo = deque([node])
    popleft, push = todo.popleft, todo.append
    while todo:
        node = popleft()
        _push_children(node, push)
        yield node


def _push_children(node, push) -> None:
    """``push`` each child node of ``node``, in ``ast.iter_child_nodes``' order."""
    fields = _CHILD_FIELDS.get(node.__class__)
    if fields is None:
        fields = _fields_plan(node.__class__, _NAME_FIELDS, _CHILD_FIELDS)
    for field_name in fields:
        value = getattr(node, field_name, None)
        if value.__class__ is list:
            for item in value:
                if isinstance(item, ast.AST):
                    push(item)
        elif isinstance(value, ast.AST):
            push(value)


_DEFERRED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def own_nodes(statements, enter_classes: bool = False):
    """The nodes of ``statements`` (a function's or the module's body), not of the functions
    and lambdas defined in them, which run later, from anywhere. A class body runs where it
    stands: with ``enter_classes`` its nodes are included (its methods still are not)."""
    skipped = _DEFERRED if enter_classes else _DEFERRED + (ast.ClassDef,)
    todo = list(statements)
    while todo:
        node = todo.pop()
        if isinstance(node, skipped):
            continue
        yield node
        todo.extend(child_nodes(node))

