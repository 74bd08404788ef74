"""Lint v3 recall, each claim checked against torch: the twin-critic idiom, the
overloads of torch.min/max, a Distribution's log_prob, the `# BUG` lines of the
Lightning and Hugging Face examples, framework-run backward."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import lint_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "rules"
INPLACE_ERROR = "modified by an inplace operation"


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expected_lines(path: Path) -> set[int]:
    return {n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if "# expect:" in line}


def function_lines(path: Path, name: str) -> range:
    import ast
    node = next(n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(n, ast.FunctionDef) and n.name == name)
    return range(node.lineno, node.end_lineno + 1)


TWIN = FIXTURES / "recall_v3_twin_critics_overloads.py"


def test_optimizer_class_parameter_trainer_fails_where_flagged():
    module = load(TWIN)
    trainer = module.Trainer(module.actor, module.q1, module.q2)
    flagged = {f.line for f in lint_file(str(TWIN))[0]} & set(function_lines(TWIN, "train_step"))
    assert flagged == expected_lines(TWIN) & set(function_lines(TWIN, "train_step")) and len(flagged) == 2
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        trainer.train_step(torch.randn(6, 3), torch.randn(6, 2), torch.randn(6, 1))


@pytest.mark.parametrize("name", ["twin_critic_bug", "twin_critic_actor_first",
                                  "twin_critic_loss_after_the_steps", "greedy_actions_are_indices"])
def test_twin_critic_findings_are_exactly_the_runs_that_fail(name):
    module = load(TWIN)
    torch.manual_seed(0)
    flagged = {f.line for f in lint_file(str(TWIN))[0]} & set(function_lines(TWIN, name))
    args = (torch.randn(6, 3), torch.randn(6, 2), torch.randn(6, 1))
    if flagged:
        assert flagged == expected_lines(TWIN) & set(function_lines(TWIN, name))
        with pytest.raises(RuntimeError, match=INPLACE_ERROR):
            getattr(module, name)(*args)
    else:
        getattr(module, name)(*args)  # runs: nothing to report


OVERLOADS = [  # (code after `h`, `g` are made, flagged, fails in backward)
    ("v = torch.max(h, 1)[0]\nv += 1\nout = v.sum()", False, False),
    ("v = h.max(dim=1).values\nv += 1\nout = v.sum()", False, False),
    ("v = torch.max(h)\nv += 1\nout = v", True, True),
    ("v = h.min()\nv.mul_(2)\nout = v", True, True),
    ("v = torch.min(h, g)\ng.mul_(2)\nout = v.sum()", True, True),
    ("v = h.max(g)\nh += 1\nout = v.sum()", True, True),
    ("v = torch.min(h, 0)[0]\nh += 1\nout = v.sum()", False, False),
]


@pytest.mark.parametrize("code, flagged, fails", OVERLOADS)
def test_min_max_overloads_save_what_torch_saves(code, flagged, fails):
    head = ("import torch\nx = torch.randn(3, 3, requires_grad=True)\n"
            "h = torch.sin(x)\ng = torch.cos(x)\n")
    findings = lint_source(head + code + "\nout.backward()\n")
    assert bool([f for f in findings if f.code == "ADL001"]) is flagged
    scope: dict = {}
    if fails:
        with pytest.raises(RuntimeError, match=INPLACE_ERROR):
            exec(head + code + "\nout.backward()\n", scope)
    else:
        exec(head + code + "\nout.backward()\n", scope)


def test_log_prob_without_backward_in_the_file():
    path = FIXTURES / "recall_v3_log_prob_without_backward.py"
    source = path.read_text(encoding="utf-8")
    assert ".backward(" not in source and "autograd.grad(" not in source
    assert {f.line for f in lint_file(str(path))[0]} == expected_lines(path)
    module = load(path)
    mixture = module.Mixture(torch.ones(4))
    value = torch.randn(3, 4, requires_grad=True)
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        mixture.log_prob(value).sum().backward()
    mixture.cdf(value).sum().backward()  # the write is not on the returned path
    module.Mixture(torch.ones(4, requires_grad=True)).entropy().backward()  # out of place


def test_log_prob_fix_keeps_the_value_and_the_gradient():
    path = FIXTURES / "recall_v3_log_prob_without_backward.py"
    source = path.read_text(encoding="utf-8")
    (finding,) = [f for f in lint_file(str(path))[0] if f.code == "ADL001"]
    assert finding.fix is not None and not finding.fix.safe
    (edit,) = finding.fix.edits
    lines = source.splitlines(keepends=True)
    line = lines[edit.line - 1]
    assert edit.line == edit.end_line
    lines[edit.line - 1] = line[:edit.column - 1] + edit.content + line[edit.end_column - 1:]
    fixed = "".join(lines)
    assert not lint_source(fixed, "fixed.py")
    namespace: dict = {}
    exec(compile(fixed, "fixed.py", "exec"), namespace)
    value = torch.randn(3, 4, requires_grad=True)
    out = namespace["Mixture"](torch.ones(4)).log_prob(value)
    out.sum().backward()
    reference_value = value.detach().clone().requires_grad_()
    reference = torch.logsumexp(torch.log_softmax(reference_value * torch.ones(4), -1), -1) - 1.0
    reference.sum().backward()
    assert torch.equal(out, reference) and torch.equal(value.grad, reference_value.grad)


@pytest.mark.parametrize("example, fixed_line", [
    ("lightning_train.py", "h = torch.cat([torch.full_like(h[:, :1], 0.5), h[:, 1:]], dim=1)"),
    ("huggingface_train.py", "h = h + 1.0"),
])
def test_examples_bug_lines_are_found_and_the_fixed_line_is_silent(example, fixed_line):
    path = ROOT / "examples" / example
    source = path.read_text(encoding="utf-8")
    bug = next(n for n, line in enumerate(source.splitlines(), 1) if "# BUG" in line)
    assert [(f.line, f.code) for f in lint_file(str(path))[0]] == [(bug, "ADL001")]
    lines = source.splitlines()
    indent = re.match(r"\s*", lines[bug - 1]).group(0)
    lines[bug - 1] = indent + fixed_line
    assert lint_source("\n".join(lines) + "\n", example) == []


FRAMEWORK_LOSS = {
    "lightning": ("import lightning.pytorch as L\n", "L.LightningModule", "training_step(self, batch, batch_idx)"),
    "trainer": ("from transformers import Trainer\n", "Trainer", "compute_loss(self, model, batch)"),
}


@pytest.mark.parametrize("framework", sorted(FRAMEWORK_LOSS))
def test_a_loss_the_framework_backpropagates_is_checked(framework):
    imports, base, signature = FRAMEWORK_LOSS[framework]
    body = ("    def {sig}:\n"
            "        h = torch.exp(batch * 2)\n"
            "        h {write}\n"
            "        return h.sum()\n")
    head = f"import torch\n{imports}\n\nclass Task({base}):\n"
    buggy = head + body.format(sig=signature, write="+= 1")
    assert [(f.line, f.code) for f in lint_source(buggy)] == [(8, "ADL001")]
    assert lint_source(head + body.format(sig=signature, write="= h + 1")) == []
    # what the framework does with the returned loss: backward through it
    batch = torch.randn(3, requires_grad=True)
    h = torch.exp(batch * 2)
    h += 1
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):
        h.sum().backward()


@pytest.mark.parametrize("backward", ["accelerator.backward(g_loss)", "self.manual_backward(g_loss)",
                                      "scaler.scale(g_loss).backward()"])
def test_framework_run_backward_counts_for_step_order(backward):
    source = (
        "import torch\nimport torch.nn as nn\n"
        "D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))\n"
        "d_opt = torch.optim.Adam(D.parameters())\n\n"
        "def step(self, x, accelerator, scaler):\n"
        "    d_real = D(x)\n"
        "    d_loss = d_real.mean()\n"
        "    d_loss.backward(retain_graph=True)\n"
        "    d_opt.step()\n"
        "    g_loss = -d_real.mean()\n"
        f"    {backward}\n")
    assert [(f.line, f.code) for f in lint_source(source)] == [(10, "ADL003")]


def test_helpers_called_from_a_modules_forward_are_checked():
    path = FIXTURES / "recall_v3_helpers_of_modules.py"
    source = path.read_text(encoding="utf-8")
    assert ".backward(" not in source
    assert {f.line for f in lint_file(str(path))[0]} == expected_lines(path)
    module = load(path)
    x, mask = torch.randn(2, 3, 4), torch.rand(2, 3, 3) > 0.5
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):  # attention's write
        module.attention(*torch.randn(3, 2, 3, 4, requires_grad=True), mask).sum().backward()
    with pytest.raises(RuntimeError, match=INPLACE_ERROR):  # gated's write
        module.gated(torch.randn(3, requires_grad=True)).sum().backward()
    decay = torch.rand(3, requires_grad=True)
    with torch.no_grad():  # how such state updates run (not claimed either way)
        module.update_state(torch.zeros(3), decay, torch.randn(3))
    module.post_process(torch.randn(2, 3), torch.rand(2, 3) > 0.5)  # no graph: works
    assert module.Block().predict(x, torch.rand(2, 3, 12) > 0.5).shape == (2, 3, 12)


FREED = FIXTURES / "adl019_backward_through_freed_graph.py"


class _Stats:
    @staticmethod
    def tune(d):
        return float(d.detach().mean() > 0)


@pytest.mark.parametrize("name", ["not_detached", "detached", "retained", "recomputed",
                                  "through_an_unknown_helper", "on_different_branches",
                                  "hidden_state_not_detached", "hidden_state_detached"])
def test_backward_through_freed_graph_flagged_exactly_where_it_fails(name):
    module = load(FREED)
    lines = set(function_lines(FREED, name))
    flagged = {f.line for f in lint_file(str(FREED))[0] if f.code == "ADL019"} & lines
    assert flagged == expected_lines(FREED) & lines
    if name.startswith("hidden_state"):
        batches = [(torch.randn(2, 3, 4), torch.randn(2, 3, 1)) for _ in range(3)]
        if flagged:
            with pytest.raises(RuntimeError, match="backward through the graph a second time"):
                getattr(module, name)(batches)
        else:
            getattr(module, name)(batches)
        return
    args = [torch.randn(6, 4), torch.randn(6, 2)] + \
        ([_Stats()] if name == "through_an_unknown_helper" else []) + \
        ([True] if name == "on_different_branches" else [])
    if flagged:
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            getattr(module, name)(*args)
    else:
        getattr(module, name)(*args)
