"""FastMoE's Megatron integration adds a load-balancing loss to the language
model loss.  It collects each layer's gate loss into a list and averages
`torch.tensor(loss_list)`: `torch.tensor` copies the values into a new leaf
tensor, so the balance loss has no graph and the gates never receive its
gradient.  Nothing raises; the experts stay as unbalanced as the task loss
leaves them.  The fix is `torch.cat([l.view(1) for l in loss_list]).mean()`.
Buggy line: `bal_loss = torch.tensor(loss_list).mean() * balance_loss_weight`
in `forward_step_with_balance_loss`.
Expected finding: ADL009 there.
Source: https://github.com/laekov/fastmoe/issues/49"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GShardGate(nn.Module):
    def __init__(self, d_model, num_expert):
        super().__init__()
        self.gate = nn.Linear(d_model, num_expert)
        self.loss = None

    def forward(self, x):
        score = F.softmax(self.gate(x), dim=-1)
        fraction = score.mean(0)
        self.loss = (fraction * fraction).sum() * score.shape[-1]
        return score

    def get_loss(self, clear=True):
        loss = self.loss
        if clear:
            self.loss = None
        return loss


class MoELayer(nn.Module):
    def __init__(self, d_model=4, num_expert=3):
        super().__init__()
        self.gate = GShardGate(d_model, num_expert)
        self.experts = nn.ModuleList(nn.Linear(d_model, d_model) for _ in range(num_expert))

    def forward(self, x):
        score = self.gate(x)
        outs = torch.stack([e(x) for e in self.experts], dim=-1)
        return (outs * score.unsqueeze(1)).sum(-1)


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(MoELayer() for _ in range(2))

    def forward(self, x):
        for layer in self.layers:
            x = x + layer(x)
        return x


def forward_step_with_balance_loss(model, x, y, balance_loss_weight=1.0):
    loss = F.mse_loss(model(x), y)
    loss_list = [layer.gate.get_loss(clear=False) for layer in model.layers]
    bal_loss = torch.tensor(loss_list).mean() * balance_loss_weight  # missed: ADL009
    return loss + bal_loss


def _gate_grad(with_balance):
    torch.manual_seed(0)
    model = TinyLM()
    x, y = torch.randn(5, 4), torch.randn(5, 4)
    if with_balance:
        loss = forward_step_with_balance_loss(model, x, y, balance_loss_weight=10.0)
    else:
        loss = F.mse_loss(model(x), y)
    loss.backward()
    return model.layers[0].gate.gate.weight.grad.clone()


def bug_shows():
    """The gates' gradient is the same with and without the balance loss."""
    return torch.equal(_gate_grad(True), _gate_grad(False))


def run():
    torch.manual_seed(0)
    model = TinyLM()
    forward_step_with_balance_loss(model, torch.randn(5, 4), torch.randn(5, 4)).backward()
