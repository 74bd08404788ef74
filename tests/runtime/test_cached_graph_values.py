"""AD302 helps for a value kept with its graph and reused by the next iteration:

- a method's cache, `if <same input as last time>: return self.<cached>`, of a value computed from
  an input that requires grad (a reciprocal-space calculator's k-vectors of a cell that requires
  grad): the guard reuses the value only when it carries no graph;
- a tensor made once before the loop from inputs that require grad but that no optimizer trains
  and that are no parameters (a surrogate's training targets): detached where it is made.

Each help, applied, gives the hand-written version's losses and parameters; a cache of values
without a graph and targets computed from a parameter get neither help."""

import torch

from helpers import apply_help, run_plain, run_program

CACHE = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self._key = None
        self._cached = None

    def basis(self, scale):
        if self._key is not None and torch.equal(scale, self._key):  # GUARD
            return self._cached
        basis = torch.stack([scale.sin(), scale.cos(), scale ** 2])
        self._key = scale.detach().clone()
        self._cached = basis
        return basis

    def forward(self, x, scale):
        return x @ self.basis(scale)


features = Features()
weights = nn.Parameter(torch.randn(3))
scale = torch.tensor(0.7, requires_grad=True)
optimizer = torch.optim.SGD([weights], lr=0.1)
losses = []
for step in range(3):
    x = torch.randn(5, 3)
    out = features(x, scale) * weights.sum()
    grad_scale = torch.autograd.grad(out.sum(), scale, create_graph=True)[0]
    loss = out.pow(2).mean() + grad_scale ** 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "weights": weights.detach().clone()}
"""

UNCACHED = CACHE.replace("""        if self._key is not None and torch.equal(scale, self._key):  # GUARD
            return self._cached
""", "")

TARGETS = """
import torch
import torch.nn as nn
torch.manual_seed(0)
inputs = torch.rand(16, 2, requires_grad=True)
targets = (inputs ** 2).sum(dim=1)  # MADE
data = {"x": inputs.detach(), "y": targets}
model = nn.Linear(2, 1)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
losses = []
for step in range(4):
    loss = (model(data["x"]).squeeze(-1) - data["y"]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""


def test_a_cache_of_a_value_with_a_graph_is_reused_only_without_one(tmp_path):
    outcome = run_program(tmp_path, CACHE)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD302"]
    assert diagnosis.primary.line == outcome.line("GUARD")
    assert "and not self._cached.requires_grad" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    reference = run_plain(tmp_path, UNCACHED, "reference.py")["result"]
    assert torch.allclose(fixed["losses"], reference["losses"])
    assert torch.allclose(fixed["weights"], reference["weights"])


def test_the_calculator_computing_its_basis_each_call_is_silent(tmp_path):
    outcome = run_program(tmp_path, UNCACHED)
    assert outcome.error is None and outcome.diagnoses == []


def test_targets_made_once_from_untrained_inputs_are_detached_where_made(tmp_path):
    outcome = run_program(tmp_path, TARGETS)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD302"]
    assert diagnosis.primary.line == outcome.line("MADE")
    assert diagnosis.help[0].replacement.strip() == "targets = (inputs ** 2).sum(dim=1).detach()"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    reference = run_plain(tmp_path, TARGETS.replace("(inputs ** 2).sum(dim=1)", "(inputs.detach() ** 2).sum(dim=1)"),
                          "reference.py")["result"]
    assert torch.equal(fixed["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["params"], reference["params"]))


def test_targets_computed_from_a_parameter_are_not_detached(tmp_path):
    outcome = run_program(tmp_path, TARGETS.replace("inputs = torch.rand(16, 2, requires_grad=True)",
                                                    "inputs = nn.Parameter(torch.rand(16, 2))"))
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD302"]
    assert all(".detach()" not in (h.replacement or "") for h in diagnosis.help)
