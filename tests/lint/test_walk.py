"""The linter's own visitor (lint/walk.py) walks exactly what ast.NodeVisitor walks,
and split_lines splits exactly where the tokenizer ends lines: both were made faster
(docs/lint.md, "Performance"), and neither may change what the rules see."""

from __future__ import annotations

import ast
import glob
import io
import os
import re
import tokenize

import torch

from autograd_doctor.lint import walk
from autograd_doctor.lint.findings import split_lines


class _Recorded(walk.FastVisitor):
    def __init__(self):
        super().__init__()
        self.seen = []

    def visit(self, node):
        self.seen.append(node)
        return super().visit(node)


class _RecordedReference(ast.NodeVisitor):
    def __init__(self):
        self.seen = []

    def visit(self, node):
        self.seen.append(node)
        return super().visit(node)


def _real_sources():
    torch_nn = os.path.join(os.path.dirname(torch.__file__), "nn", "modules")
    ours = os.path.join(os.path.dirname(walk.__file__))
    return sorted(glob.glob(os.path.join(torch_nn, "*.py")))[:12] + sorted(glob.glob(os.path.join(ours, "*.py")))


# What the fast visitor does not call into: contexts, operators and import aliases (no handler of
# the linter's is for them, and they hold no other node).
_CHILDLESS = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop, ast.alias)


def test_fast_visitor_visits_the_same_nodes_in_the_same_order():
    total = 0
    for path in _real_sources():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        fast, reference = _Recorded(), _RecordedReference()
        fast.visit(tree)
        reference.visit(tree)
        # A comparison's operators are a list: the visitor still calls into them (no children).
        expected = [node for node in reference.seen
                    if not isinstance(node, _CHILDLESS) or isinstance(node, ast.cmpop)]
        assert len(fast.seen) == len(expected) > 0, path
        assert all(a is b for a, b in zip(fast.seen, expected)), path
        total += len(fast.seen)
    assert total > 10_000  # real files, every kind of node


def test_no_visitor_of_the_linter_handles_a_node_it_does_not_call_into():
    import autograd_doctor.lint as lint

    handled = {name for path in glob.glob(os.path.join(os.path.dirname(lint.__file__), "**", "*.py"), recursive=True)
               for name in re.findall(r"def visit_(\w+)", open(path, encoding="utf-8").read())}
    childless = {cls.__name__ for base in _CHILDLESS for cls in [base, *base.__subclasses__()]}
    assert handled and not handled & childless


def test_a_handler_for_a_node_without_children_is_still_called():
    class Constants(walk.FastVisitor):
        def __init__(self):
            super().__init__()
            self.values = []

        def visit_Constant(self, node):
            self.values.append(node.value)

    visitor = Constants()
    visitor.visit(ast.parse("x = f(1, 'a') + 2.5\n"))
    assert visitor.values == [1, "a", 2.5]


def _tokenizer_lines(source: str) -> list[int]:
    """The line number that each line's first token has, as the tokenizer counts."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return sorted({t.start[0] for t in tokens if t.type == tokenize.NAME})


def test_split_lines_keeps_the_tokenizers_line_numbers():
    # \x0c (form feed) and U+2028 are line breaks to str.splitlines, not to Python.
    for source in ["a = 1\nb = 2\n", "a = 1\r\nb = 2\rc = 3", "a = 1\x0c\nb = 2\n",
                   "s = '\u2028'\nb = 2\n", "x = 1  # \x1c\ny = 2\n", ""]:
        lines = split_lines(source)
        assert "".join(lines) == source
        for number in _tokenizer_lines(source):
            assert lines[number - 1].split("=")[0].strip().isidentifier(), (source, number)


def test_child_nodes_are_ast_iter_child_nodes_in_the_same_order():
    total = 0
    for path in _real_sources():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            assert walk.child_nodes(node) == list(ast.iter_child_nodes(node)), (path, node)
            total += 1
    assert total > 10_000


def _qualified_name_by_recursion(node, aliases):
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _qualified_name_by_recursion(node.value, aliases)
        return f"{base}.{node.attr}" if base else None
    return None


def test_qualified_name_is_its_recursive_definition():
    """names.qualified_name was made a loop (it is asked on most calls); its answers are the
    recursive definition's, on every node of real files (an empty alias included)."""
    from autograd_doctor.lint.names import qualified_name

    aliases = {"torch": "torch", "F": "torch.nn.functional", "nn": "torch.nn", "math": "math", "self": ""}
    total = 0
    for path in _real_sources():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            assert qualified_name(node, aliases) == _qualified_name_by_recursion(node, aliases)
            total += 1
    assert total > 10_000
