"""TabM's example training loop clips the gradients between
`optimizer.zero_grad()` and `loss.backward()`: at that point the gradients
are cleared, so `clip_grad_norm_` bounds nothing, and the step applies the
unclipped gradient of the backward that follows.  Nothing raises.  The fix
moves the clip between `backward()` and `step()` (fixed in 28e47ae).
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` in `train_epoch`, before
`loss.backward()`.
Expected finding: ADL022 (a gradient clip that cannot bound the step it
precedes).
Source: https://github.com/yandex-research/tabm/issues/20"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TabM(nn.Module):
    def __init__(self, n_features=4, k=2):
        super().__init__()
        self.k = k
        self.backbone = nn.Sequential(nn.Linear(n_features, 8), nn.ReLU())
        self.heads = nn.Linear(8, k)

    def forward(self, x):
        return self.heads(self.backbone(x))


def apply_model(model, x):
    return model(x).mean(dim=1)


def train_epoch(model, optimizer, batches, gradient_clipping_norm=0.01):
    for x, y in batches:
        model.train()
        optimizer.zero_grad()
        loss = F.mse_loss(apply_model(model, x), y)
        if gradient_clipping_norm is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping_norm)  # expect: ADL022
        loss.backward()
        optimizer.step()


def bug_shows():
    """The step applies the full gradient, as if there were no clipping."""
    torch.manual_seed(1)
    batches = [(torch.randn(6, 4), torch.randn(6) * 10)]
    torch.manual_seed(0)
    model = TabM()
    train_epoch(model, torch.optim.SGD(model.parameters(), lr=0.1), batches)
    torch.manual_seed(0)
    reference = TabM()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    x, y = batches[0]
    F.mse_loss(apply_model(reference, x), y).backward()
    torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.01)
    ref_opt.step()
    return not torch.allclose(model.heads.weight, reference.heads.weight, atol=1e-6)
