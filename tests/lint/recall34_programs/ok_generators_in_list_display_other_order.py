"""Correct near twin: the optimizers' list is in the other order (`opts = [opt_b, opt_a]`),
so `opts[k]` steps the other generator than `gens[k]`, whose output the second loss reads;
nothing it saved changes.  Runs."""
import torch
import torch.nn as nn


def train(steps=1):
    torch.manual_seed(0)
    gen_a = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    gen_b = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
    opt_a = torch.optim.Adam(gen_a.parameters(), lr=1e-3)
    opt_b = torch.optim.Adam(gen_b.parameters(), lr=1e-3)
    gens = [gen_a, gen_b]
    opts = [opt_b, opt_a]
    for _ in range(steps):
        z = torch.randn(5, 4)
        for k in range(2):
            fake = gens[k](z)
            recon_loss = (fake - z).pow(2).mean()
            opts[k].zero_grad()
            recon_loss.backward(retain_graph=True)
            opts[k].step()
            spread_loss = -fake.std()
            spread_loss.backward()


def run():
    train()
