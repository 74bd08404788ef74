"""A blog post on the order of `backward()` and `step()` for GAN losses in
PyTorch works on the smallest possible GAN (a 1x1 convolution as generator G
and one as discriminator D, SGD for both), computes `D_loss = D(Y.detach())
** 2` and `G_loss = D(Y) ** 2` from one forward `Y = G(X)`, and shows which
orders of backward and step are right.  One of the orders it warns against
backpropagates D's loss, steps D's optimizer, and only then backpropagates
G's loss: G's loss went through D's weights, which the step has just changed
in place, and the backward raises "one of the variables needed for gradient
computation has been modified by an inplace operation".  Re-created as the
post's setup wrapped in a `GANTrainer` with the post's `set_requires_grad`
helper, two iterations.  Raises at `G_loss.backward()`.
Buggy line: `self.D_optim.step()` between the forward of `G_loss` and its
backward.
Source: https://www.codeprj.com/zh/blog/e6aa8d1.html"""
import torch
from torch import nn


def set_requires_grad(net: nn.Module, mode=True):
    for p in net.parameters():
        p.requires_grad_(mode)


class GANTrainer:
    def __init__(self):
        self.G = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
        self.D = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
        with torch.no_grad():
            self.G.weight.fill_(0.5)
            self.D.weight.fill_(0.7)
        self.G_optim = torch.optim.SGD(self.G.parameters(), lr=1.0)
        self.D_optim = torch.optim.SGD(self.D.parameters(), lr=1.0)

    def train_step(self, X):
        self.G_optim.zero_grad()
        self.D_optim.zero_grad()
        Y = self.G(X)
        D_loss = self.D(Y.detach()) ** 2
        G_loss = self.D(Y) ** 2
        D_loss.backward()
        self.D_optim.step()  # expect: ADL003
        set_requires_grad(self.D, False)
        G_loss.backward()
        set_requires_grad(self.D, True)
        self.G_optim.step()
        return D_loss.item(), G_loss.item()


def run():
    torch.manual_seed(0)
    trainer = GANTrainer()
    X = torch.ones(size=[1, 1, 1, 1])
    for _ in range(2):
        trainer.train_step(X)
