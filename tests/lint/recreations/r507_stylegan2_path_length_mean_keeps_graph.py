"""adriansahlman/stylegan2_pytorch's loss functions handed tensors, not
numbers, back to the trainer for its statistics: "the memory issues during
loss.backward() were due to saving the computation graph for loss for each
iteration.  I changed some of the losses to return only scalars, and it
solved the memory problem" (merged).  Here the generator's path-length
regularizer returns the batch's path lengths, and the trainer folds them
into its running mean `self.pl_mean` as tensors, so the running mean holds
the graphs (with the double-backward graph of `autograd.grad(...,
create_graph=True)`) of every regularized iteration so far.  Nothing raises;
memory grows with the number of iterations.
Buggy line: `self.pl_mean = self.pl_mean + self.pl_decay * (pl_lengths.mean() - self.pl_mean)` in `Trainer.train`.
Source: https://github.com/adriansahlman/stylegan2_pytorch/pull/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def G_logistic_ns(G, D, latents):
    fakes = G(latents)
    return F.softplus(-D(fakes)).mean()


def G_pathreg(G, latents, pl_avg, pl_weight=2.0):
    latents = latents.detach().requires_grad_(True)
    fakes = G(latents)
    noise = torch.randn_like(fakes) / fakes.size(1) ** 0.5
    (grad,) = torch.autograd.grad(outputs=(fakes * noise).sum(), inputs=latents, create_graph=True)
    pl_lengths = grad.pow(2).sum(1).sqrt()
    reg = pl_weight * (pl_lengths - pl_avg).pow(2).mean()
    return reg, pl_lengths


def D_logistic_r1(G, D, latents, reals):
    fake_scores = D(G(latents).detach())
    real_scores = D(reals)
    return F.softplus(fake_scores).mean() + F.softplus(-real_scores).mean()


class Trainer:
    def __init__(self, G, D, latent_size=4, G_reg_interval=1, pl_decay=0.01):
        self.G, self.D = G, D
        self.latent_size = latent_size
        self.G_opt = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99))
        self.D_opt = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99))
        self.G_reg_interval = G_reg_interval
        self.pl_decay = pl_decay
        self.pl_mean = torch.zeros([])
        self.stats = {}

    def train(self, reals_iter, iterations):
        for seen in range(iterations):
            reals = next(reals_iter)
            latents = torch.randn(reals.size(0), self.latent_size)
            self.D_opt.zero_grad()
            D_loss = D_logistic_r1(self.G, self.D, latents, reals)
            D_loss.backward()
            self.D_opt.step()

            self.G_opt.zero_grad()
            G_loss = G_logistic_ns(self.G, self.D, latents)
            G_loss.backward()
            if seen % self.G_reg_interval == 0:
                G_reg, pl_lengths = G_pathreg(self.G, latents, self.pl_mean.detach())
                G_reg.backward()
                self.pl_mean = self.pl_mean + self.pl_decay * (pl_lengths.mean() - self.pl_mean)  # missed: ADL023
            self.G_opt.step()
            self.stats = {"Loss/G": G_loss.item(), "Loss/D": D_loss.item()}


def bug_shows():
    """After two iterations the running path-length mean still holds the graphs of both iterations' path lengths."""
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 6))
    D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    trainer = Trainer(G, D)
    trainer.train(iter([torch.randn(4, 6) for _ in range(2)]), 2)
    means, seen, stack = 0, set(), [trainer.pl_mean.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        means += type(node).__name__.startswith("MeanBackward")
        stack.extend(n for n, _ in node.next_functions)
    return means == 2
