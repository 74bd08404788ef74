"""A forum user checks a REINFORCE baseline on a toy task: an MLP outputs the
means and (log) scales of four 1-D Gaussians meant to follow x, x**2, x**3
and sin(x); a sample is drawn, scored by its squared error, and the loss is
`-log_prob(sample) * -error`.  "Is this the standard way to apply reinforce
for Normal distributions?"  The training loop calls `loss.backward()` and
`opt.step()` every iteration but never clears the gradients: each step
applies the sum of every gradient so far (the user's debug print of the first
layer's gradient mean shows it).  Nothing raises.
Buggy line: `opt.step()` after `loss.backward()` with no `opt.zero_grad()`
in the loop.
Source: https://discuss.pytorch.org/t/vanilla-reinforce-for-continuous-distributions/25718"""
import torch
import torch.nn.functional as F
from torch import nn

h = 32


def make_model():
    return nn.Sequential(nn.Linear(1, h), nn.Sigmoid(), nn.Linear(h, 8))


def train(iterations=3, batch=16, record=None):
    model = make_model()
    opt = torch.optim.Adam(model.parameters(), lr=0.0005)
    for i in range(iterations):
        x = torch.randn(batch, 1)
        y = torch.cat([x, x ** 2, x ** 3, torch.sin(x)], dim=1)

        res = model(x)
        means, sigs = res[:, :4], torch.exp(res[:, 4:])

        dists = torch.distributions.Normal(means, sigs)
        samples = dists.sample()

        # REINFORCE
        mloss = F.mse_loss(samples, y, reduction="none")
        loss = -dists.log_prob(samples) * -mloss
        loss = loss.mean()

        if record is not None:
            grad = model[0].weight.grad
            record.append(None if grad is None else grad.clone())
        loss.backward()
        opt.step()  # expect: ADL018

        if i % 1000 == 0:
            print("{: 6} grad".format(i), model[0].weight.grad.mean().item())
    return model


def bug_shows():
    """Before the second backward the first layer's .grad still holds the
    first iteration's gradient."""
    torch.manual_seed(0)
    record = []
    train(record=record)
    return record[1] is not None and record[1].abs().sum().item() > 0
