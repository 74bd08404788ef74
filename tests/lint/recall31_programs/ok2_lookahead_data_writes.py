"""Correct near twin: a Lookahead-style optimizer whose `sync_slow` writes through
`.data` (no version bump) and is called after the backward of the only graph."""
import torch
import torch.nn as nn
from torch.optim import Optimizer


class Lookahead(Optimizer):
    def __init__(self, params, alpha=0.5):
        super().__init__(params, dict(alpha=alpha))

    @torch.no_grad()
    def sync_slow(self):
        for group in self.param_groups:
            for p in group["params"]:
                slow = self.state[p].setdefault("slow", p.detach().clone())
                slow.add_(p.detach() - slow, alpha=group["alpha"])
                p.data.copy_(slow)


def run():
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    inner = torch.optim.SGD(net.parameters(), lr=0.1)
    la = Lookahead(net.parameters())
    for _ in range(3):
        out = net(torch.randn(3, 4))
        loss = out.pow(2).mean()
        inner.zero_grad()
        loss.backward()
        inner.step()
        la.sync_slow()
    return out
