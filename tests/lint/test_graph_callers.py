"""A helper's `Tensor` parameters need a call that passes a graph tensor before a
write to what it saved is reported (lint/graph_callers.py).  Each claim of the
fixture is checked against torch: the reported helpers fail in backward when
called the way the file calls them; the silent ones, called with data the way
their callers do, run and backpropagate nothing through the write."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import lint_file

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "tensor_parameters_need_graph_callers.py"
INPLACE_ERROR = "modified by an inplace operation"


def load():
    spec = importlib.util.spec_from_file_location(FIXTURE.stem, FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flagged_functions() -> set[str]:
    import ast
    tree = ast.parse(FIXTURE.read_text(encoding="utf-8"))
    lines = {f.line for f in lint_file(str(FIXTURE))[0] if f.code == "ADL001"}
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
            and any(n.lineno <= line <= n.end_lineno for line in lines)}


def test_only_helpers_a_call_feeds_a_graph_are_flagged():
    assert flagged_functions() == {"spread", "sharpen", "normalise"}


def test_flagged_helpers_fail_as_the_file_calls_them():
    module = load()
    torch.manual_seed(0)
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        module.feature_spread_loss(torch.randn(5, 4))
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        module.attention_loss(nn.Linear(4, 3), torch.randn(5, 4))
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        module.Trainer(nn.Linear(4, 3)).step(torch.randn(5, 4))


def test_silent_helpers_run_on_the_data_their_callers_pass():
    module = load()
    torch.manual_seed(0)
    data = torch.randn(8, 4)
    data[:, 0] = 1.0  # a constant column: its std is clamped
    standardize = module.standardizer(data)
    expected = (data - data.mean(0)) / data.std(0).clamp(min=1e-7)
    assert torch.equal(standardize(data), expected)
    assert torch.equal(module.clamp_spread(data), data.std(0).clamp(min=1e-7))
    trainer = module.Trainer(nn.Linear(4, 3))
    clipped = trainer.clip(trainer.features(data))
    assert torch.equal(clipped, torch.sigmoid(data) / torch.sigmoid(data).sum())


def test_a_call_with_a_module_output_in_another_function_counts():
    source = FIXTURE.read_text(encoding="utf-8") + (
        "\n\ndef fit(x):\n    standardizer(encoder(x))\n")
    lines = {f.line for f in lint_source(source, "case.py") if f.code == "ADL001"}
    clamp = next(n for n, line in enumerate(source.splitlines(), 1)
                 if line.strip() == "std[std < min_std] = min_std")  # z_score_statistics'
    # the chain standardizer -> z_score_statistics is now fed: its clamp is reported
    assert clamp in lines and clamp not in {f.line for f in lint_file(str(FIXTURE))[0]}


def test_a_function_that_only_calls_itself_has_no_evidence():
    source = (
        "import torch\n\n\n"
        "def refine(x: torch.Tensor, n: int):\n"
        "    y = torch.exp(x)\n"
        "    y[0] = 0\n"
        "    return y if n == 0 else refine(y, n - 1)\n\n\n"
        "def step(loss):\n    loss.backward()\n")
    assert [f for f in lint_source(source, "case.py") if f.code == "ADL001"] == []
    fed = source + "\n\nleaf = torch.zeros(3, requires_grad=True)\nrefine(leaf * 2, 3)\n"
    assert [f.line for f in lint_source(fed, "case.py") if f.code == "ADL001"] == [6]
    namespace: dict = {}
    exec(compile(fed, "case.py", "exec"), namespace)
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        namespace["refine"](namespace["leaf"] * 2, 1).sum().backward()
