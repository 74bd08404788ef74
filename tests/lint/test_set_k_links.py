"""Set K (docs/lint.md, thirteenth check): the links its first run missed or got
wrong, each claim checked with torch.

* SLAC's policy (re-created in r170) builds `self.net = build_mlp(...)
  .apply(initialize_weight)` with `build_mlp` imported from another file of
  the project, then clamps one of the views `torch.chunk` returns in place.
  A factory of another project file (``project_factories.py``) and an
  `nn.Module` method that returns the module (`.apply`, `.to`...) now build
  a known module, so ADL015 sees the graph.
* adversarial_robustness_pytorch's `WATrainer` (fetched for set K, left out
  of it) calls `self.standard_loss(...)`, inherited from `core.utils.Trainer`
  of another file, which starts with `self.optimizer.zero_grad()`; ADL018
  reads the inherited method (``clearing.inherited_method_clears``).
* DeepRobust's `allowed_mask += allowed_mask.t()` (re-created in r171):
  PyTorch refuses it, which ADL010's message now says.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
import torch

from autograd_doctor.lint.engine import lint_file, lint_source


def repository(root, files: dict) -> None:
    (root / "setup.py").write_text("")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def load(path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def codes_at(path) -> list[tuple[int, str]]:
    findings, _ = lint_file(str(path))
    return sorted((f.line, f.code) for f in findings)


# --- a module built by a factory of another project file ----------------------

UTILS = """\
    import torch
    from torch import nn


    def build_mlp(input_dim, output_dim, hidden=16):
        layers = [nn.Linear(input_dim, hidden), nn.ReLU(), nn.Linear(hidden, output_dim)]
        return nn.Sequential(*layers)


    def build_features(input_dim, output_dim):
        return torch.zeros(input_dim, output_dim)


    def initialize_weight(m):
        if isinstance(m, nn.Linear):
            nn.init.xavier_uniform_(m.weight)
    """

POLICY = """\
    import torch
    from torch import nn

    from agent.utils import build_mlp, build_features, initialize_weight


    class GaussianPolicy(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = build_mlp(4, 4).apply(initialize_weight)
            self.table = build_features(4, 4)

        def sample(self, x):
            mean, log_std = torch.chunk(self.net(x), 2, dim=-1)
            return mean, log_std.clamp_(-20, 2)

        def lookup(self, x):
            mean, log_std = torch.chunk(x @ self.table, 2, dim=-1)
            return mean, log_std.clamp_(-20, 2)
    """


def test_a_factory_of_another_project_file_builds_a_module(tmp_path):
    repository(tmp_path, {"agent/__init__.py": "", "agent/utils.py": UTILS,
                          "agent/policy.py": POLICY})
    policy_file = tmp_path / "agent" / "policy.py"
    # `sample` writes a view of the factory-built network's output: found;
    # `lookup` writes a view of a product with a constant table the other file
    # makes with `torch.zeros` (no module): nothing known, silent
    assert codes_at(policy_file) == [(15, "ADL015")]
    sys.path.insert(0, str(tmp_path))
    try:
        policy = load(policy_file, "agent.policy").GaussianPolicy()
    finally:
        sys.path.remove(str(tmp_path))
    x = torch.randn(3, 4)
    with torch.no_grad():
        policy.sample(x)  # without gradients the write is allowed
    policy.lookup(x)      # no graph: allowed
    with pytest.raises(RuntimeError, match="returns multiple views"):
        policy.sample(x)


MODULE_METHODS = textwrap.dedent("""\
    import torch
    from torch import nn


    def init(m):
        pass


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.applied = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4)).apply(init)
            self.moved = nn.Linear(4, 4).to("cpu")
            self.frozen = nn.Linear(4, 4).requires_grad_(False)

        def sample(self, net, x):
            mean, log_std = torch.chunk(net(x), 2, dim=-1)
            return mean, log_std.clamp_(-20, 2)

        def applied_half(self, x):
            mean, log_std = torch.chunk(self.applied(x), 2, dim=-1)
            return log_std.clamp_(-20, 2)

        def moved_half(self, x):
            mean, log_std = torch.chunk(self.moved(x), 2, dim=-1)
            return log_std.clamp_(-20, 2)

        def frozen_half(self, x):
            mean, log_std = torch.chunk(self.frozen(x), 2, dim=-1)
            return log_std.clamp_(-20, 2)
    """)


def test_module_methods_that_return_the_module_keep_it_known():
    lines = sorted(f.line for f in lint_source(MODULE_METHODS) if f.code == "ADL015")
    # `.apply(init)` and `.to("cpu")` return the module: found; a module frozen with
    # `.requires_grad_(False)` makes no graph and is not claimed
    assert lines == [22, 26]
    namespace: dict = {}
    exec(compile(MODULE_METHODS, "<policy>", "exec"), namespace)
    policy = namespace["Policy"]()
    x = torch.randn(3, 4)
    for method in (policy.applied_half, policy.moved_half):
        with pytest.raises(RuntimeError, match="returns multiple views"):
            method(x)
    policy.frozen_half(x)  # nothing requires grad: the write is allowed


def test_the_out_of_place_clamp_keeps_values_and_gradients():
    torch.manual_seed(0)
    net = torch.nn.Linear(4, 4)
    x = torch.randn(3, 4)
    out = net(x)
    mean, log_std = torch.chunk(out, 2, dim=-1)
    fixed = mean.sum() + log_std.clamp(-20, 2).exp().sum()  # the rewrite ADL015 asks for
    (grad,) = torch.autograd.grad(fixed, net.weight)
    reference_out = net(x)
    reference = reference_out[:, :2].sum() + torch.clamp(reference_out[:, 2:], -20, 2).exp().sum()
    (reference_grad,) = torch.autograd.grad(reference, net.weight)
    assert torch.equal(fixed, reference) and torch.equal(grad, reference_grad)


# --- a clearing method inherited from a base class of another file ------------

TRAIN = """\
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def standard_loss(self, x, y):
            self.optimizer.zero_grad()
            return F.mse_loss(self.model(x), y)

        def plain_loss(self, x, y):
            return F.mse_loss(self.model(x), y)
    """

WATRAIN = """\
    from core.utils import Trainer


    class WATrainer(Trainer):
        def train(self, data):
            for x, y in data:
                loss = self.standard_loss(x, y)
                loss.backward()
                self.optimizer.step()

        def train_plain(self, data):
            for x, y in data:
                loss = self.plain_loss(x, y)
                loss.backward()
                self.optimizer.step()
    """


def test_an_inherited_clearing_method_counts_and_a_plain_one_does_not(tmp_path):
    repository(tmp_path, {"core/__init__.py": "", "core/utils/__init__.py": "from .train import Trainer\n",
                          "core/utils/train.py": TRAIN, "experiments/watrain.py": WATRAIN})
    trainer_file = tmp_path / "experiments" / "watrain.py"
    # found through the package's re-export (`from .train import Trainer`):
    # `standard_loss` clears, `plain_loss` does not
    assert codes_at(trainer_file) == [(15, "ADL018")]
    sys.path.insert(0, str(tmp_path))
    try:
        wa = load(trainer_file, "experiments.watrain")
    finally:
        sys.path.remove(str(tmp_path))
        for name in [m for m in sys.modules if m == "core" or m.startswith("core.")]:
            del sys.modules[name]

    def last_step_gradient(method: str) -> torch.Tensor:
        torch.manual_seed(0)
        trainer = wa.WATrainer(torch.nn.Linear(3, 1))
        trainer.optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.0)  # steps change nothing
        data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
        getattr(trainer, method)(data)
        return trainer.model.weight.grad.clone(), trainer, data

    cleared, trainer, data = last_step_gradient("train")
    summed, _, _ = last_step_gradient("train_plain")
    trainer.model.zero_grad()
    torch.nn.functional.mse_loss(trainer.model(data[-1][0]), data[-1][1]).backward()
    assert torch.equal(cleared, trainer.model.weight.grad)  # the last batch's gradient only
    assert not torch.allclose(summed, cleared)              # the sum of all three


# --- ADL010: PyTorch refuses what it can see overlapping ----------------------

def test_adl010_message_matches_what_pytorch_does():
    source = textwrap.dedent("""\
        import torch


        def symmetrise(mask: torch.Tensor):
            mask += mask.t()
            return mask
        """)
    (finding,) = lint_source(source)
    assert finding.code == "ADL010" and "PyTorch raises" in finding.message
    mask = torch.zeros(4, 4)
    mask[0, 1] = 1
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        mask += mask.t()
    fixed = mask.clone()
    fixed += fixed.t().clone()  # the safe fix
    assert torch.equal(fixed, mask + mask.t())
    # a strided view PyTorch cannot check: no error, a loop-order dependent result
    a = torch.arange(16.).view(4, 4)
    expected = a - a[:, :1].clone()
    a -= a[:, :1]
    assert not torch.equal(a, expected)
