"""flake8 plugin, the generated saves table, pre-commit hook, docs coverage."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint.cli import build_parser
from autograd_doctor.lint.names import SAVES_PATH
from autograd_doctor.lint.rules import ALL_RULES

ROOT = Path(__file__).resolve().parents[2]
BAD = "import torch\nx = torch.randn(3, requires_grad=True)\ny = torch.sigmoid(x)\ny[0] = 0\n" \
      "z = x.clone().detach()  # noqa: ADL007\n"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_saves_table", ROOT / "scripts" / "gen_saves_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_saves_table_matches_the_installed_torch():
    gen = load_generator()
    generated, shipped = gen.render(gen.build_table()), SAVES_PATH.read_text(encoding="utf-8")
    if json.loads(shipped)["torch_version"] == torch.__version__.split("+")[0]:
        assert generated == shipped
    else:  # another tested torch (make test-torch2.14): the same facts, another version stamp
        assert {**json.loads(generated), "torch_version": None} == {**json.loads(shipped), "torch_version": None}


def test_saves_table_facts():
    ops = json.loads(SAVES_PATH.read_text())["ops"]
    assert ops["torch.sigmoid"]["output"] and ops["torch.sigmoid"]["inputs"] == []
    assert not ops["operator.mul"]["output"] and ops["operator.mul"]["inputs"] == [0, 1]
    assert ops["operator.mul:scalar"]["inputs"] == []
    assert ops["torch.nn.functional.linear"]["inputs"] == [0, 1]
    for name in ("exp", "tanh", "relu", "softmax", "log_softmax", "sqrt"):
        assert ops[f"torch.{name}"]["output"], name
    for name in ("sin", "log", "matmul", "div", "pow"):
        assert 0 in ops[f"torch.{name}"]["inputs"], name


def test_flake8_plugin_runs_in_real_flake8(tmp_path):
    if shutil.which("flake8", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("flake8 is not installed (pip install -e '.[test]')")
    (tmp_path / "m.py").write_text(BAD)
    proc = subprocess.run([sys.executable, "-m", "flake8", "--select", "ADL", "m.py"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("m.py:4:1: ADL001 ")  # noqa honoured by flake8


def test_flake8_plugin_class_api():
    import ast

    from autograd_doctor.lint.flake8_plugin import Flake8Plugin
    tree = ast.parse(BAD)
    results = list(Flake8Plugin(tree, "m.py", BAD.splitlines(keepends=True)).run())
    # the opt-in advice rule (ADL007) is not reported through flake8
    assert [(r[0], r[1], r[2][:6], r[3]) for r in results] == [(4, 0, "ADL001", Flake8Plugin)]


def test_pre_commit_hook_definition():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert re.search(r"^- id: autograd-doctor-lint$", text, re.M)
    assert re.search(r"^  entry: autograd-doctor lint", text, re.M)
    assert re.search(r"^  language: python$", text, re.M)
    assert re.search(r"^  types: \[python\]$", text, re.M)


def test_docs_cover_every_rule_and_option():
    docs = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    for rule in ALL_RULES:
        assert f"### {rule.code} {rule.name}" in docs, rule.code
    for action in build_parser()._actions:
        for option in action.option_strings:
            assert f"`{option}" in docs, option
    from autograd_doctor.lint.rules import render_markdown
    assert render_markdown() in docs, "docs/lint.md rules section is stale: regenerate it"
