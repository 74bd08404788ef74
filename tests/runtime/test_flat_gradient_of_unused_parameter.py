"""AD309 where the None `.grad` is read inside a flattening of every parameter's gradient
(`torch.cat([p.grad.view(-1) for p in model.parameters()])`, as A-GEM and other gradient
projections do): skipping the parameter would shift every later block of the vector, which the
code then writes back per parameter. The help puts zeros in its place (the gradient of a loss
that does not use the parameter), and the changed program trains as the hand-written version
does (set 18's A-GEM case, avalanche#791)."""

import torch

from helpers import apply_help, run_as_script, run_plain

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(5, 6)
        self.heads = nn.ModuleList([nn.Linear(6, 2), nn.Linear(6, 2)])

    def forward(self, x, head):
        return self.heads[head](torch.tanh(self.trunk(x)))


def flatten(model):
    return torch.cat([FLAT for p in model.parameters()])  # JOIN


model = TwoHeads()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
old_x, old_y = torch.randn(4, 5), torch.randint(0, 2, (4,))
losses = []
for step in range(3):
    x, y = torch.randn(4, 5), torch.randint(0, 2, (4,))
    optimizer.zero_grad()
    F.cross_entropy(model(old_x, 0), old_y).backward()
    reference = flatten(model)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x, 1), y)
    loss.backward()
    current = flatten(model)
    projected = current - torch.dot(current, reference).clamp(max=0) / reference.dot(reference) * reference
    offset = 0
    for p in model.parameters():
        if p.grad is not None:
            p.grad.copy_(projected[offset:offset + p.numel()].view_as(p))
        offset += p.numel()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""

BUGGY = PROGRAM.replace("FLAT", "p.grad.view(-1)")
REFERENCE = PROGRAM.replace("FLAT", "p.grad.view(-1) if p.grad is not None else torch.zeros(p.numel())")


def test_flattened_gradients_get_zeros_for_a_head_without_gradient_and_train_as_the_reference(tmp_path):
    outcome = run_as_script(tmp_path, BUGGY)
    assert isinstance(outcome.error, AttributeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD309"]
    assert diagnosis.primary.line == outcome.line("JOIN")
    assert "zeros" in diagnosis.help[0].message
    assert "torch.zeros_like(p)" in diagnosis.help[0].replacement
    assert "if p.grad is not None]" not in diagnosis.help[0].replacement  # no skip: positions kept
    fixed = apply_help(outcome, 0)
    result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    expected = run_plain(tmp_path, REFERENCE, "reference.py")["result"]
    assert torch.equal(result["losses"], expected["losses"])
    assert all(torch.equal(a, b) for a, b in zip(result["params"], expected["params"]))


def test_a_dict_of_gradient_norms_keeps_the_skip(tmp_path):
    # Not a concatenation: each entry stands alone, so the parameters without a gradient are skipped.
    source = BUGGY.replace("    return torch.cat([p.grad.view(-1) for p in model.parameters()])  # JOIN",
                           "    norms = {n: p.grad.norm() for n, p in model.named_parameters()}  # JOIN\n"
                           "    return norms")
    outcome = run_as_script(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD309"]
    assert "if p.grad is not None" in diagnosis.help[0].replacement
    assert "zeros_like" not in diagnosis.help[0].replacement
