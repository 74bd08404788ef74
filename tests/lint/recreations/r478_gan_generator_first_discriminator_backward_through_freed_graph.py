"""A question on a Stack Overflow mirror: a GAN whose generator must be
trained first.  The batch's fake images `fake = self.G(z)` feed the
generator's loss, which is backpropagated and stepped; the discriminator's
loss then uses the same `fake` without `.detach()`, so `loss_d.backward()`
runs back into the generator's graph, already freed by `loss_g.backward()`:
"Trying to backward through the graph a second time".  Passing
`retain_graph=True` only hides it (and the generator's weights have changed
by then); the answer's fix is `self.D(fake.detach())` in the discriminator's
loss.
Buggy line: `loss_d.backward()` through `fake` in `GANTrainer.step`.
Source: https://whosebug.com/question/5232549/How-does-PyTorch-s-loss-backward-work-when-retain-graph-True-is-specified"""
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, latent=4, d=8):
        torch.manual_seed(0)
        self.latent = latent
        self.G = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, d), nn.Tanh())
        self.D = nn.Sequential(nn.Linear(d, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
        self.criterion = nn.BCELoss()
        self.optim_g = torch.optim.Adam(self.G.parameters(), lr=2e-4)
        self.optim_d = torch.optim.Adam(self.D.parameters(), lr=2e-4)

    def step(self, real):
        n = real.size(0)
        ones, zeros = torch.ones(n, 1), torch.zeros(n, 1)
        z = torch.randn(n, self.latent)
        fake = self.G(z)
        # computing loss_g and loss_d
        loss_g = self.criterion(self.D(fake), ones)
        self.optim_g.zero_grad()
        loss_g.backward()
        self.optim_g.step()

        loss_d = self.criterion(self.D(real), ones) + self.criterion(self.D(fake), zeros)
        self.optim_d.zero_grad()
        loss_d.backward()  # expect: ADL019
        self.optim_d.step()
        return loss_g.item(), loss_d.item()


def run():
    trainer = GANTrainer()
    for _ in range(2):
        trainer.step(torch.randn(4, 8))
