"""A faster ``ast.NodeVisitor`` for the linter's walks.

``ast.NodeVisitor.visit`` looks its handler up by name on every node, and its
``generic_visit`` goes through ``ast.iter_fields``, a generator.  On a large
file the walk meets hundreds of thousands of nodes, so both costs show in the
linter's time (docs/lint.md, "Performance").  This visitor keeps one handler
per node class and reads the fields directly; what it visits, and in what
order, is the same as ``ast.NodeVisitor``; nodes that cannot hold other nodes
(constants, contexts, operators) are not walked into at all.
"""

from __future__ import annotations

import ast


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


class FastVisitor:
    """``ast.NodeVisitor`` with a handler cache and a field loop without generators."""

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
        for field_name in node._fields:
            value = getattr(node, field_name, None)
            if isinstance(value, ast.AST):
                self.visit(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)


def _nothing(node):
    return None


def child_nodes(node) -> list:
    """``list(ast.iter_child_nodes(node))``, in the same order, without its generators."""
    children = []
    for field_name in node._fields:
        value = getattr(node, field_name, None)
        if isinstance(value, ast.AST):
            children.append(value)
        elif isinstance(value, list):
            children.extend(item for item in value if isinstance(item, ast.AST))
    return children
