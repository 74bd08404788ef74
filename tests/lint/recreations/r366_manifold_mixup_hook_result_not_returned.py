"""ManifoldMixup mixes a hidden layer's output with a shuffled copy of the
batch through a forward hook, `hook_modify`, which rebinds `output = lam *
output + (1 - lam) * output[indices]` and returns nothing.  A forward hook
changes a module's output only by returning the new value; rebinding the
local name does nothing, so the hidden states were never mixed (only the
targets were).  Nothing raises.  The fix ends the hook with `return output`.
Buggy line: `output = self.lam * output + ...` in
`ManifoldMixupModel.hook_modify`.
Expected finding: ADL021 (a forward hook that computes a new output and
throws it away).
Source: https://github.com/shivamsaboo17/ManifoldMixup/pull/1"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ManifoldMixupModel(nn.Module):
    def __init__(self, model, alpha=1.0):
        super().__init__()
        self.model = model
        self.alpha = alpha
        self.lam = 1.0
        self.indices = None
        self.module_list = [m for m in self.model.modules() if isinstance(m, nn.Linear)][:-1]

    def forward(self, x, k):
        self.lam = float(np.random.beta(self.alpha, self.alpha))
        self.indices = torch.randperm(x.size(0))
        handle = self.module_list[k].register_forward_hook(self.hook_modify)
        out = self.model(x)
        handle.remove()
        return out

    def hook_modify(self, module, input, output):
        output = self.lam * output + (1 - self.lam) * output[self.indices]  # expect: ADL021


def mixup_loss(outputs, targets, lam, indices):
    return lam * F.cross_entropy(outputs, targets) + (1 - lam) * F.cross_entropy(outputs, targets[indices])


def bug_shows():
    """The mixed model's output equals the plain model's: nothing was mixed."""
    torch.manual_seed(0)
    np.random.seed(0)
    net = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3))
    mixer = ManifoldMixupModel(net)
    x = torch.randn(5, 4)
    mixed = mixer(x, k=0)
    mixup_loss(mixed, torch.tensor([0, 1, 2, 0, 1]), mixer.lam, mixer.indices).backward()
    return torch.allclose(mixed, net(x)) and mixer.lam < 1.0
