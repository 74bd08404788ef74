"""Near twin: the helper returns a constant leaf only for an empty batch (nothing to learn, on
purpose), and the loss with its graph otherwise.  Correct: the encoder trains."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def nt_xent(z1, z2, temperature=0.5):
    if z1.size(0) == 0:
        return torch.tensor(0.0, requires_grad=True)
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    n = z1.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


class Pretrainer:
    def __init__(self):
        self.encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
        self.optimizer = torch.optim.SGD(self.encoder.parameters(), lr=0.1)

    def step(self, x):
        view1 = x + 0.1 * torch.randn_like(x)
        view2 = x + 0.1 * torch.randn_like(x)
        loss = nt_xent(self.encoder(view1), self.encoder(view2))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def run():
    torch.manual_seed(0)
    trainer = Pretrainer()
    before = [p.detach().clone() for p in trainer.encoder.parameters()]
    trainer.step(torch.randn(8, 6))
    return before, [p.detach().clone() for p in trainer.encoder.parameters()]
