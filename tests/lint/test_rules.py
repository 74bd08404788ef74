"""Each fixture marks the lines that must be flagged with `# expect: CODE`;
every other line must not be flagged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection, lint_file
from autograd_doctor.lint.rules import ALL_RULES, OPT_IN_CODES, SECTIONS, rule_documentation

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")
EVERY_RULE = Selection(("ADL",) + tuple(sorted(OPT_IN_CODES)))


def expected_findings(path: Path) -> set[tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, code.strip()) for code in m.group(1).split(",") if code.strip()}
    return out


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.stem)
def test_fixture_findings_match_expect_comments(fixture):
    findings, _ = lint_file(str(fixture), selection=EVERY_RULE)
    got = {(f.line, f.code) for f in findings}
    assert got == expected_findings(fixture)


def test_every_rule_has_a_fixture_with_a_positive_case():
    expected_codes = {code for p in FIXTURES.glob("*.py") for _, code in expected_findings(p)}
    assert expected_codes == {r.code for r in ALL_RULES}


def test_rule_modules_define_only_hooks_the_walk_calls():
    """A misspelt hook (`def on_cal(...)`) would silently never run: every `on_*`
    function of a rule module is one the walk calls, every hook is used, and
    every rule but ADL000 (the engine's) has a `check_scope` or `check_file`."""
    from autograd_doctor.lint import rules
    hooks = {(module.__name__, name) for module in rules.RULE_MODULES for name, value in vars(module).items()
             if callable(value) and getattr(value, "__module__", None) == module.__name__
             and name.startswith("on_")}
    assert {name for _, name in hooks} == set(rules.HOOK_NAMES), sorted(hooks)
    for module in rules.RULE_MODULES:
        checks = hasattr(module, "check_scope") or hasattr(module, "check_file")
        assert checks or module.RULE.code == "ADL000", module.__name__


def test_brief_examples():
    head = "import torch\nx = torch.randn(3, requires_grad=True)\nw = torch.randn(3, requires_grad=True)\n"
    assert [f.code for f in lint_source(head + "y = x * x\ny[0] = 0\n")] == []
    assert [f.code for f in lint_source(head + "h = x * 1\ny = h * w\nh[0] = 0\n")] == ["ADL001"]
    # x is a leaf that requires grad: PyTorch refuses the write itself
    assert [f.code for f in lint_source(head + "y = x * w\nx[0] = 0\n")] == ["ADL014"]
    assert [f.code for f in lint_source(head + "y = torch.sigmoid(x)\ny[0] = 0\n")] == ["ADL001"]


def test_message_names_the_saving_op_and_its_line():
    src = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny[0] = 0\n"
    (finding,) = lint_source(src, "m.py")
    assert "torch.sigmoid" in finding.message and "line 3" in finding.message
    assert "SigmoidBackward0" in finding.message
    assert (finding.file, finding.line, finding.column, finding.end_line, finding.end_column) == \
        ("m.py", 4, 1, 4, 9)


def test_columns_are_characters_not_utf8_bytes():
    src = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.exp(x)\n" \
          "s = 'éé'; y[0] = 0\n"
    (finding,) = lint_source(src)
    assert finding.column == 11


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_documentation_has_every_section(rule):
    doc = rule_documentation(rule.code)
    assert doc.startswith(f"# {rule.code} {rule.name}")
    for title in SECTIONS:
        assert f"## {title}" in doc
    assert rule.code.startswith("ADL") and len(rule.code) == 6


def test_rule_documentation_unknown_code_is_none():
    assert rule_documentation("ADL998") is None
    assert rule_documentation("adl001") is not None


def test_rule_codes_are_unique_and_sorted():
    codes = [r.code for r in ALL_RULES]
    assert codes == sorted(set(codes))


DOC_PREAMBLE = ("import copy\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
                "D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))\n"
                "d_opt = torch.optim.SGD(D.parameters(), lr=0.1)\n\n\n"
                "def train_step(loss):\n    loss.backward()\n\n\n"
                "def call_f():\n    f(D(torch.randn(2, 4)))  # f's tensors may carry a graph\n\n\n"
                "def f(x: torch.Tensor, w: torch.Tensor, h: torch.Tensor, a: torch.Tensor,\n"
                "      t: torch.Tensor, pred: torch.Tensor, bias: torch.Tensor, out: torch.Tensor,\n"
                "      loss_a: torch.Tensor, loss_b: torch.Tensor, loss, lr, n, decay, args,\n"
                "      d_loss, g_loss, d_opt, g_opt, history):\n")


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_documented_example_is_flagged_and_use_instead_is_not(rule):
    import textwrap

    def codes(body):
        return {f.code for f in lint_source(DOC_PREAMBLE + textwrap.indent(body, "    ") + "\n",
                                            selection=EVERY_RULE)}

    assert rule.code in codes(rule.example)
    assert codes(rule.use_instead) == set()


def test_docstring_examples():
    import doctest

    import autograd_doctor.lint as lint_pkg
    from autograd_doctor.lint import engine, rules
    for module in (lint_pkg, engine, rules):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_extra_attributes_on_shared_ast_nodes_do_not_confuse_the_walk():
    import ast
    # Other tools annotate trees with `.parent`, which reaches the shared
    # ast.Load() singleton and would make a walk over __dict__ loop forever.
    other = ast.parse("a = b[0]")
    for node in ast.walk(other):
        for child in ast.iter_child_nodes(node):
            child.parent = node
    src = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny[0] = 0\n"
    try:
        assert [f.code for f in lint_source(src)] == ["ADL001"]
    finally:
        for node in ast.walk(other):
            node.__dict__.pop("parent", None)


def test_data_only_methods_use_no_layer_of_their_module():
    import ast

    from autograd_doctor.lint.methods import data_only_methods
    cls = ast.parse(
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        self.data = []\n"
        "        self.steps = 0\n"
        "        self.fc = nn.Linear(2, 2)\n"
        "    def put(self, t):\n"
        "        self.data.append(t)\n"
        "        self.steps += 1\n"                     # not a literal assignment: steps is not plain
        "    def batch(self):\n"
        "        b = torch.tensor(self.data)\n"
        "        self.data = []\n"
        "        return b\n"
        "    def batch_twice(self):\n"
        "        return self.batch(), self.batch()\n"   # calls a data-only method
        "    def value(self, x):\n"
        "        return self.fc(x)\n"                   # a layer
        "    def weighted(self, x):\n"
        "        return x * self.weight\n"              # never assigned here: maybe a parameter
        "    def whole(self, x):\n"
        "        return self(x)\n"
        "    def passes_self(self, x):\n"
        "        return helper(self, x)\n"
        "    def uses_value(self, x):\n"
        "        return self.value(x)\n").body[0]
    assert data_only_methods(cls) == {"batch", "batch_twice"}


def test_another_frameworks_autodiff_is_left_alone_only_without_torch():
    """The Warp fixture's loop is silent because the file imports no torch module; the
    same loop in a file that imports torch is a torch loop, and `tape.zero()` clears
    no torch gradient: ADL018."""
    source = (FIXTURES / "other_autodiff_framework.py").read_text(encoding="utf-8")
    assert lint_source(source) == []
    with_torch = source.replace("import numpy as np\n", "import numpy as np\nimport torch\n", 1)
    assert [f.code for f in lint_source(with_torch)] == ["ADL018"]
    only_torch = "\n".join(l for l in with_torch.splitlines() if "warp" not in l.split("#")[0]
                           or "import" not in l)
    assert [f.code for f in lint_source(only_torch)] == ["ADL018"]
