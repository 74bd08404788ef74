"""A help that replaces a statement written over several lines keeps the statement's own layout.

Replacement text is relative to the statement's first column (its first line unindented, later
lines indented relative to it); `apply_replacement` and the text report add the statement's
indentation, once. Text taken from the file (`segment`, `replace_nodes_text`) used to keep the
file's indentation on its later lines, so they got the statement's indentation twice: in a
function, a method or a loop, the printed help and what `run --fix` wrote were indented too deep.

Each case: the help applied to the program gives exactly the expected lines (the original layout),
the printed help shows those lines, the file parses, and it computes what a hand-written correct
version computes.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from autograd_doctor.diagnosis.source import replace_nodes_text, segment
from autograd_doctor.report.text import render_diagnosis
from helpers import run_plain, run_program


@dataclass
class Case:
    name: str
    code: str
    help_starts: str  # the beginning of the help's message
    buggy: str
    replaced: str  # the lines the help puts in place of the statement, as the fixed file has them
    reference: str  # a hand-written correct version
    compare: list


CASES = [
    # A leaf written in place by a call over two lines, in a function (indentation 4): the help
    # wraps the statement in `with torch.no_grad():`, a help over several lines by construction.
    Case("leaf_write_in_function", "AD102", "if this is initialisation", """
        import torch


        def step(w, g):
            w.add_(g,
                   alpha=-0.1)
            return w


        w = torch.linspace(0.0, 1.0, 4, requires_grad=True)
        g = torch.full((4,), 2.0)
        step(w, g)
        (w * w).sum().backward()
    """, """
            with torch.no_grad():
                w.add_(g,
                       alpha=-0.1)
    """, """
        import torch

        w = torch.linspace(0.0, 1.0, 4)
        w = (w - 0.1 * torch.full((4,), 2.0)).requires_grad_()
        (w * w).sum().backward()
    """, ["w.grad", "w.detach()"]),
    # An in-place module in an nn.Sequential written over several lines in __init__ (indentation 8).
    Case("sequential_in_method", "AD101", "define the Dropout", """
        import torch
        from torch import nn


        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(
                    nn.Linear(6, 8),
                    nn.Sigmoid(),
                    nn.Dropout(0.3, inplace=True),
                    nn.Linear(8, 1),
                )

            def forward(self, x):
                return self.body(x)


        torch.manual_seed(0)
        critic = Critic()
        critic(torch.randn(5, 6)).sum().backward()
        grad = critic.body[0].weight.grad
    """, """
                self.body = nn.Sequential(
                    nn.Linear(6, 8),
                    nn.Sigmoid(),
                    nn.Dropout(0.3, inplace=False),
                    nn.Linear(8, 1),
                )
    """, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        body = nn.Sequential(nn.Linear(6, 8), nn.Sigmoid(), nn.Dropout(0.3), nn.Linear(8, 1))
        body(torch.randn(5, 6)).sum().backward()
        grad = body[0].weight.grad
    """, ["grad"]),
    # `loss = (...)` over four lines in a nested loop (indentation 12), a term taken with .item().
    Case("loss_in_parentheses_in_nested_loop", "AD206", "add the tensor itself", """
        import torch
        import torch.nn.functional as F


        def train(steps):
            torch.manual_seed(0)
            model = torch.nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x, y = torch.randn(8, 3), torch.randn(8, 1)
            for epoch in range(steps):
                for _ in range(2):
                    prediction = model(x)
                    penalty = model.weight.pow(2).sum()
                    loss = (
                        F.mse_loss(prediction, y)
                        + 0.5 * penalty.item()
                    )
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            return model.weight.detach()


        weight = train(2)
    """, """
                    loss = (
                        F.mse_loss(prediction, y)
                        + 0.5 * penalty
                    )
    """, """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        for _ in range(4):
            loss = F.mse_loss(model(x), y) + 0.5 * model.weight.pow(2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        weight = model.weight.detach()
    """, ["weight"]),
    # The same term at the top level (indentation 0): the layout was right there and stays so.
    Case("loss_in_parentheses_at_top_level", "AD206", "add the tensor itself", """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        penalty = model.weight.pow(2).sum()
        loss = (
            F.mse_loss(model(x), y)
            + 0.5 * penalty.item()
        )
        loss.backward()
        grad = model.weight.grad
    """, """
        loss = (
            F.mse_loss(model(x), y)
            + 0.5 * penalty
        )
    """, """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        (F.mse_loss(model(x), y) + 0.5 * model.weight.pow(2).sum()).backward()
        grad = model.weight.grad
    """, ["grad"]),
    # Two writes into a parameter in a loop in a method (indentation 12), the first over three
    # lines: the `with torch.no_grad():` help takes both, each keeping its own layout.
    Case("parameter_writes_in_method_loop", "AD102", "if this is initialisation", """
        import torch
        from torch import nn


        class Probe(nn.Module):
            def __init__(self):
                super().__init__()
                self.weight = nn.Parameter(torch.ones(3, 2))

            def nudge(self, delta):
                for column in range(2):
                    self.weight[:, column] += (
                        delta * (column + 1)
                    )
                    self.weight[:, column] -= delta


        probe = Probe()
        probe.nudge(torch.full((3,), 0.5))
        (probe.weight ** 2).sum().backward()
        grad = probe.weight.grad
    """, """
                    with torch.no_grad():
                        self.weight[:, column] += (
                            delta * (column + 1)
                        )
                        self.weight[:, column] -= delta
    """, """
        import torch

        weight = torch.tensor([[1.0, 1.5]] * 3, requires_grad=True)
        (weight ** 2).sum().backward()
        grad = weight.grad
    """, ["grad"]),
]


def _help(outcome, case):
    diagnosis = next((d for d in outcome.diagnoses if d.code == case.code), None)
    assert diagnosis is not None, f"expected {case.code}, got {[d.code for d in outcome.diagnoses]} ({outcome.error!r})"
    suggestion = next((s for s in diagnosis.help if s.message.startswith(case.help_starts)), None)
    assert suggestion is not None and suggestion.replacement, [s.message for s in diagnosis.help]
    return diagnosis, suggestion


def _same(a, b) -> bool:
    return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_the_applied_help_keeps_the_statements_layout_and_computes_the_reference(tmp_path, case):
    outcome = run_program(tmp_path, case.buggy)
    diagnosis, suggestion = _help(outcome, case)
    fixed = apply_replacement(outcome.source, suggestion.location, suggestion.replacement)
    ast.parse(fixed)
    source_lines = outcome.source.split("\n")
    first = suggestion.location.line - 1
    indent = source_lines[first][:len(source_lines[first]) - len(source_lines[first].lstrip())]
    expected = [indent + line for line in textwrap.dedent(case.replaced).strip("\n").split("\n")]
    fixed_lines = fixed.split("\n")
    assert fixed_lines[first:first + len(expected)] == expected, fixed
    # The lines before and after the statement are the program's own.
    assert fixed_lines[:first] == source_lines[:first]
    assert fixed_lines[first + len(expected):] == source_lines[suggestion.location.end_line:]
    # The report prints the same lines.
    printed = render_diagnosis(diagnosis).split("\n")
    start = next(i for i, line in enumerate(printed) if line.startswith("help: ") and case.help_starts in line)
    shown = [line.split(" | ", 1)[1] for line in printed[start + 2:start + 2 + len(expected)]]
    assert shown == expected, "\n".join(printed)
    # And the fixed program computes what the correct version computes.
    got = run_plain(tmp_path, fixed, "fixed.py")
    want = run_plain(tmp_path, case.reference, "reference.py")
    for expression in case.compare:
        assert _same(eval(expression, dict(got)), eval(expression, dict(want))), expression


def _statement_at(tree: ast.Module, line: int) -> ast.stmt:
    return next(node for node in ast.walk(tree) if isinstance(node, ast.stmt) and node.lineno == line)


def test_replace_nodes_text_is_relative_to_the_statements_first_column(tmp_path):
    """Also with a new text over several lines (a `segment` of another node, in the same
    convention) put in the place of a node that starts on a later line."""
    path = tmp_path / "layout.py"
    path.write_text(textwrap.dedent("""
        def f(a, b):
            for i in range(2):
                total = torch.cat(
                    [a,
                     b],
                    dim=0,
                )  # joined
            return total
    """))
    tree = ast.parse(path.read_text())
    statement = _statement_at(tree, 4)
    call = statement.value
    pieces = call.args[0]
    assert segment(str(path), pieces) == "[a,\n     b]"
    assert segment(str(path), statement) == "total = torch.cat(\n    [a,\n     b],\n    dim=0,\n)"
    new_text = replace_nodes_text(str(path), statement, [(call.keywords[0].value, "1"),
                                                         (pieces, segment(str(path), pieces) + "[::-1]")])
    assert new_text == "total = torch.cat(\n    [a,\n     b][::-1],\n    dim=1,\n)"
    # The same call's arguments written from scratch over two lines.
    assert replace_nodes_text(str(path), statement, [(pieces, "[b,\n     a]")]) == \
        "total = torch.cat(\n    [b,\n     a],\n    dim=0,\n)"
