"""The linter's own visitor (lint/walk.py) walks exactly what ast.NodeVisitor walks,
and split_lines splits exactly where the tokenizer ends lines: both were made faster
(docs/lint.md, "Performance"), and neither may change what the rules see."""

from __future__ import annotations

import ast
import glob
import io
import os
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


def test_fast_visitor_visits_the_same_nodes_in_the_same_order():
    total = 0
    for path in _real_sources():
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        fast, reference = _Recorded(), _RecordedReference()
        fast.visit(tree)
        reference.visit(tree)
        assert len(fast.seen) == len(reference.seen) > 0, path
        assert all(a is b for a, b in zip(fast.seen, reference.seen)), path
        total += len(fast.seen)
    assert total > 10_000  # real files, every kind of node


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
