"""A SimCLR-style pretraining step: the contrastive loss is computed by a top-level helper of the
file, `nt_xent(z1, z2, temperature)`, which returns `torch.tensor(loss.item(), requires_grad=True)`
(the author's way of silencing "element 0 of tensors does not require grad").  `Pretrainer.step`
backpropagates the returned value and steps: the new leaf has no path to the encoder, so every
parameter's gradient stays None and the encoder never moves.  Written for this stop (causes,
cause 2: ADL034 across functions)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    sim.fill_diagonal_(float("-inf"))
    n = z1.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    loss = F.cross_entropy(sim, targets)
    return torch.tensor(loss.item(), requires_grad=True)


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


def bug_shows():
    before, after = run()
    return all(torch.equal(b, a) for b, a in zip(before, after))
