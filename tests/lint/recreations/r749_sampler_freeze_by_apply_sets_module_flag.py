"""OpenHGNN (heterogeneous graph library), the AdaProp model's layers: a method
meant to fix the node sampler's weights runs `layer.W_samp.apply(freeze)` with
a nested `def freeze(m): m.requires_grad = False`.  `Module.apply` hands the
function every submodule (the `nn.Linear` itself here), so the assignment sets
a new attribute on a module, which has no such flag: its `weight` still
requires grad and the optimizer keeps training the sampler.  (In the repository
the method is defined and never called; the shape is re-created here with the
call made, as a model would use it.)
Missed by every rule at set AW's first run; found since by ADL016 (a function
handed only to `<module>.apply` gets modules).
Re-created in my own shapes: a scorer with a gate layer, a `fix_gate()` method
using `apply`, and a training step after it.  Nothing raises; the gate's
weight changes after the step.
Buggy line: `m.requires_grad = False` (spelt right, on a module: `m.requires_grad_(False)`
freezes its parameters).
Source: https://github.com/BUPT-GAMMA/OpenHGNN (openhgnn/layers/AdapropT.py,
commit efc3923ce85e)"""
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, 1, bias=False)

    def fix_gate(self):
        def freeze(m):
            m.requires_grad = False  # expect: ADL016

        self.gate.apply(freeze)

    def forward(self, x):
        h = torch.relu(self.body(x))
        return (h * torch.sigmoid(self.gate(h))).sum(dim=1)


def bug_shows():
    """After `fix_gate()` and one step, the gate's weight still requires grad and
    has changed: nothing was frozen."""
    torch.manual_seed(0)
    model = Scorer(4)
    model.fix_gate()
    before = model.gate.weight.detach().clone()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    loss = model(torch.randn(8, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    return model.gate.weight.requires_grad and not torch.equal(before, model.gate.weight.detach())
