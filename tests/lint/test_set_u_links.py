"""Set U (docs/lint.md, twenty-third check).  The set's first run, with the
rules frozen at df77f05, had 4 false alarms; these tests keep the cause fixed
and the real form next to it, each claim run with torch:

* ADL016 on Mammoth's LUCIR classifier (https://github.com/aimagelab/mammoth,
  `models/lucir.py`, false): `self.weights` is an `nn.ParameterList`, so
  `self.weights[i - 1].requires_grad = False` sets the flag of a parameter
  and freezes it.  The linter took an item of any module container for a
  module.  An item of an `nn.ParameterList` / `nn.ParameterDict` is a
  parameter: silent, and the frozen weights stay where they were while the
  others take the step written by hand.  The item of an `nn.ModuleList` is a
  module: still reported, its parameters still train, and the help applied
  (`requires_grad_(False)`) freezes them.  A misspelt flag on a
  `ParameterList` item is reported as the parameter's (it still requires
  grad), and the rename applied freezes it.

* ADL001 on Mammoth's diffusion sampler (`models/cgil_utils/diffusion.py`,
  false): `sample` updates its sample in place after a layer kept it
  (`out = self.net(x, t); x -= c * out`), reached through the class's own
  `forward`; the repository builds the class only into an `nn.ModuleList` of
  another module and calls those instances only in methods decorated
  `@torch.no_grad()` (lint/instance_callers.py).  In small, in a temporary
  project: silent, and the samples, drawn as the project draws them, equal an
  out-of-place sampler written by hand.  One caller in the project that
  backpropagates through a sample, an instance handed out of the `no_grad`
  code, a subclass, or a method of the class that reaches `sample` under
  `torch.enable_grad()` keeps the report (backpropagating raises; the help
  applied gives the hand-written sampler's samples and gradients); a class
  that the project never builds (a library's) is reported as before."""

from __future__ import annotations

import importlib
import sys
import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection, lint_file
from autograd_doctor.lint.fixes import fix_source

ADL016 = Selection(("ADL016",))


def _findings(source: str):
    return [f for f in lint_source(source, "set_u.py") if f.code != "ADL000"]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_u.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "set_u.py", ADL016), unsafe=True)
    assert count > 0
    return text


# ----- a classifier with one weight matrix per task --------------------------

TASK_CLASSIFIER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class TaskClassifier(nn.Module):
        def __init__(self, in_features, per_task, n_tasks):
            super().__init__()
            torch.manual_seed(0)
            self.weights = nn.ParameterList(
                [nn.Parameter(torch.randn(per_task, in_features)) for _ in range(n_tasks)])
            self.scales = nn.ParameterDict({"old": nn.Parameter(torch.ones(1)),
                                            "new": nn.Parameter(torch.ones(1))})

        def start_task(self, i):
            self.weights[i].requires_grad = True
            self.weights[i - 1].requires_grad = False
            self.scales["old"].requires_grad = False

        def forward(self, x):
            logits = [F.linear(x, w) for w in self.weights]
            return torch.cat(logits, dim=1) * self.scales["old"] * self.scales["new"]


    def train_step(model, x, y, lr):
        loss = F.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= lr * p.grad
        return loss
    """)


def _data():
    generator = torch.Generator().manual_seed(2)
    return torch.randn(8, 5, generator=generator), torch.randint(0, 6, (8,), generator=generator)


def test_items_of_a_parameter_list_or_dict_are_parameters_not_modules():
    assert _findings(TASK_CLASSIFIER) == []


def test_the_flag_set_on_a_parameter_list_item_freezes_it():
    ns = _namespace(TASK_CLASSIFIER)
    model = ns["TaskClassifier"](5, 3, 2)
    model.start_task(1)
    before = [p.detach().clone() for p in model.parameters()]
    x, y = _data()
    ns["train_step"](model, x, y, lr=0.5)
    assert model.weights[0].requires_grad is False and model.scales["old"].requires_grad is False
    assert torch.equal(model.weights[0], before[0])       # the old task's weights: frozen
    assert torch.equal(model.scales["old"], before[2])
    # the others took the SGD step written by hand from the same gradients
    w0, w1, s_old, s_new = (t.clone() for t in before)
    w1.requires_grad_(True)
    s_new.requires_grad_(True)
    logits = torch.cat([x @ w0.t(), x @ w1.t()], dim=1) * s_old * s_new
    torch.nn.functional.cross_entropy(logits, y).backward()
    assert torch.equal(model.weights[1], (w1 - 0.5 * w1.grad).detach())
    assert torch.equal(model.scales["new"], (s_new - 0.5 * s_new.grad).detach())


# ----- the real form kept: an item of a module list --------------------------

BLOCKS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Blocks(nn.Module):
        def __init__(self, dim, n):
            super().__init__()
            torch.manual_seed(0)
            self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n)])

        def freeze_block(self, i):
            self.blocks[i].requires_grad = False

        def forward(self, x):
            for block in self.blocks:
                x = torch.tanh(block(x))
            return x
    """)


def test_the_flag_set_on_a_module_list_item_is_still_reported_and_freezes_nothing():
    findings = _findings(BLOCKS)
    assert [(f.line, f.code) for f in findings] == [(_line_of(BLOCKS, "self.blocks[i].requires_grad"), "ADL016")]
    assert "a module has no attribute `requires_grad`" in findings[0].message
    model = _namespace(BLOCKS)["Blocks"](4, 2)
    model.freeze_block(0)
    assert all(p.requires_grad for p in model.blocks[0].parameters())
    model(torch.randn(3, 4)).sum().backward()
    assert model.blocks[0].weight.grad is not None


def test_the_help_applied_to_a_module_list_item_freezes_its_parameters():
    fixed = _fixed(BLOCKS)
    assert "self.blocks[i].requires_grad_(False)" in fixed
    assert _findings(fixed) == []
    model = _namespace(fixed)["Blocks"](4, 2)
    model.freeze_block(0)
    model(torch.randn(3, 4)).sum().backward()
    assert all(not p.requires_grad and p.grad is None for p in model.blocks[0].parameters())
    assert all(p.grad is not None for p in model.blocks[1].parameters())


# ----- a misspelt flag on a parameter list item ------------------------------

MISSPELT = TASK_CLASSIFIER.replace("self.weights[i - 1].requires_grad = False",
                                   "self.weights[i - 1].require_grad = False")


def test_a_misspelt_flag_on_a_parameter_list_item_is_reported_as_the_parameters():
    findings = _findings(MISSPELT)
    assert [(f.line, f.code) for f in findings] == [(_line_of(MISSPELT, "require_grad = False"), "ADL016")]
    assert "`require_grad` is a misspelling of `requires_grad`" in findings[0].message
    assert "nothing is frozen: `self.weights[i - 1]` still requires grad" in findings[0].message
    model = _namespace(MISSPELT)["TaskClassifier"](5, 3, 2)
    model.start_task(1)
    assert model.weights[0].requires_grad is True


def test_the_rename_applied_freezes_the_parameter_list_item():
    fixed = _fixed(MISSPELT)
    assert fixed == TASK_CLASSIFIER
    model = _namespace(fixed)["TaskClassifier"](5, 3, 2)
    model.start_task(1)
    assert model.weights[0].requires_grad is False and model.weights[1].requires_grad is True


# ----- a sampler whose instances the project only calls under no_grad --------

SAMPLER = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Denoiser(nn.Module):
        def __init__(self, dim):
            super().__init__()
            torch.manual_seed(0)
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            return self.fc(x)


    class Sampler(nn.Module):
        def __init__(self, dim, steps=3):
            super().__init__()
            self.dim, self.steps = dim, steps
            self.net = Denoiser(dim)

        @torch.enable_grad()
        def fit(self, data):
            optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
            loss = (self.net(data) - data).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        def sample(self, n):
            x = torch.randn(n, self.dim, generator=torch.Generator().manual_seed(1))
            for _ in range(self.steps):
                out = self.net(x)
                x -= 0.1 * out
            return x

        def forward(self, n):
            return self.sample(n)
    """)

REPLAY = textwrap.dedent("""\
    import torch
    import torch.nn as nn

    from gen_demo.sampler import Sampler


    class Replay(nn.Module):
        def __init__(self, dim, classes):
            super().__init__()
            self.samplers = nn.ModuleList([Sampler(dim) for _ in range(classes)]).to("cpu")

        @torch.no_grad()
        def update(self, features):
            for i, data in enumerate(features):
                self.samplers[i].fit(data)

        @torch.no_grad()
        def replay(self, n):
            samples = []
            for i in range(len(self.samplers)):
                sampler = self.samplers[i]
                sampler.eval()
                samples.append(sampler(n))
            return torch.cat(samples).detach()
    """)

TRAINS_THROUGH = textwrap.dedent("""\
    from gen_demo.sampler import Sampler

    sampler = Sampler(3)
    sampler(4).sum().backward()
    """)

HANDS_OUT = REPLAY + """
    @torch.no_grad()
    def sampler_of(self, i):
        return self.samplers[i]
"""

# `replay` itself undecorated: its file calls it only from a `no_grad` method
HELPER_REPLAY = REPLAY.replace("""    @torch.no_grad()
    def replay(self, n):""", """    def replay(self, n):""") + """
    @torch.no_grad()
    def replay_all(self, n):
        return self.replay(n)
"""

TRAINS_THROUGH_THE_HELPER = textwrap.dedent("""\
    from gen_demo.replay import Replay

    replay = Replay(3, 1)
    replay.replay(4).sum().backward()
    """)

# built and fitted, never called: no evidence that the project samples at all
NEVER_CALLED = REPLAY[:REPLAY.index("    @torch.no_grad()\n    def replay(")]

SUBCLASS = textwrap.dedent("""\
    from gen_demo.sampler import Sampler


    class ConditionalSampler(Sampler):
        pass
    """)

REFINES_WITH_GRADIENTS = SAMPLER + """
    @torch.enable_grad()
    def refine(self, n):
        return self.sample(n)
"""


def _project(root, sampler=SAMPLER, **files):
    (root / "pyproject.toml").write_text("[project]\nname = 'gen-demo'\n")
    package = root / "gen_demo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "sampler.py").write_text(sampler)
    for name, text in files.items():
        (package / f"{name}.py").write_text(text)
    return package / "sampler.py"


def _adl001_lines(path) -> list[int]:
    return [f.line for f in lint_file(str(path))[0] if f.code == "ADL001"]


def _sampler_writes(source: str) -> list[int]:
    return [_line_of(source, "x -= 0.1 * out")]


@pytest.fixture
def gen_demo(tmp_path, monkeypatch):
    """Imports the temporary project's modules, and forgets them afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield lambda name: importlib.import_module(f"gen_demo.{name}")
    for name in [m for m in sys.modules if m == "gen_demo" or m.startswith("gen_demo.")]:
        del sys.modules[name]


def _hand_written_samples(net, n, dim, steps=3):
    x = torch.randn(n, dim, generator=torch.Generator().manual_seed(1))
    for _ in range(steps):
        x = x - 0.1 * (x @ net.fc.weight.t() + net.fc.bias)
    return x


def test_a_sampler_whose_instances_are_only_called_under_no_grad_is_silent_and_samples_right(tmp_path, gen_demo):
    path = _project(tmp_path, replay=REPLAY)
    assert _adl001_lines(path) == []
    replay = gen_demo("replay").Replay(3, 2)
    replay.update([torch.randn(5, 3), torch.randn(5, 3)])  # fit runs with gradients on
    samples = replay.replay(4)
    expected = torch.cat([_hand_written_samples(s.net, 4, 3) for s in replay.samplers])
    assert torch.allclose(samples, expected, atol=1e-6)
    assert not samples.requires_grad


@pytest.mark.parametrize("files", [{"replay": REPLAY, "train": TRAINS_THROUGH},
                                   {"replay": HANDS_OUT},
                                   {"replay": HELPER_REPLAY, "train": TRAINS_THROUGH_THE_HELPER},
                                   {"replay": REPLAY, "conditional": SUBCLASS},
                                   {"replay": NEVER_CALLED}],
                         ids=["a caller backpropagates", "an instance handed out",
                              "another file backpropagates through the helper", "a subclass",
                              "built and never called"])
def test_a_sampler_with_a_use_that_may_backpropagate_is_still_reported(tmp_path, gen_demo, files):
    path = _project(tmp_path, **files)
    assert _adl001_lines(path) == _sampler_writes(SAMPLER)
    sampler = gen_demo("sampler").Sampler(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        sampler(4).sum().backward()


def test_a_helper_that_the_whole_project_calls_only_without_gradients_is_silent(tmp_path, gen_demo):
    path = _project(tmp_path, replay=HELPER_REPLAY)
    assert _adl001_lines(path) == []
    replay = gen_demo("replay").Replay(3, 1)
    assert torch.allclose(replay.replay_all(4), _hand_written_samples(replay.samplers[0].net, 4, 3), atol=1e-6)


def test_a_method_of_the_class_that_reaches_the_sampler_with_gradients_keeps_the_report(tmp_path):
    path = _project(tmp_path, sampler=REFINES_WITH_GRADIENTS, replay=REPLAY)
    assert _adl001_lines(path) == _sampler_writes(SAMPLER)


def test_a_sampler_the_project_never_builds_is_reported_as_before(tmp_path):
    assert _adl001_lines(_project(tmp_path)) == _sampler_writes(SAMPLER)


def test_the_help_applied_to_the_sampler_backpropagates_like_the_hand_written_one(tmp_path, gen_demo):
    path = _project(tmp_path, train=TRAINS_THROUGH)
    select = Selection(("ADL001",))
    fixed, count = fix_source(SAMPLER, lambda t: lint_source(t, str(path), select), unsafe=True)
    assert count == 1 and "x = x - (0.1 * out)" in fixed
    path.write_text(fixed)
    assert _adl001_lines(path) == []
    sampler = gen_demo("sampler").Sampler(3)
    sampler(4).sum().backward()
    reference = gen_demo("sampler").Denoiser(3)  # the same seed: the same weights
    _hand_written_samples(reference, 4, 3).sum().backward()
    assert torch.allclose(sampler.sample(4), _hand_written_samples(reference, 4, 3), atol=1e-6)
    assert torch.allclose(sampler.net.fc.weight.grad, reference.fc.weight.grad, atol=1e-6)
    assert torch.allclose(sampler.net.fc.bias.grad, reference.fc.bias.grad, atol=1e-6)
