# message: Trying to backward through the graph a second time (or directly access saved tensors after
#   they have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph
#   a second time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 24
# helpers: lib_priors24.py
# trigger: a VAE-like model's learned prior (library module) builds its torch.distributions object
#   once in __init__ from its parameters (Normal(loc, log_scale.exp())): the exp() is recorded once, and
#   the second iteration's loss backpropagates through the scale the first backward() freed
# source: none found; the pattern as users write it (a distribution kept as a module attribute)
# results: model.prior.loc, model.prior.log_scale, model.encoder.weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lib_priors24 import LearnedPrior  # noqa: E402


class LatentModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 2)
        self.decoder = nn.Linear(2, 4)
        self.prior = LearnedPrior(2)

    def loss(self, x):
        z = self.encoder(x)
        reconstruction = nn.functional.mse_loss(self.decoder(z), x)
        return reconstruction - 0.1 * self.prior.log_prob(z).mean()


torch.manual_seed(0)
model = LatentModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randn(8, 4)
losses = []
for step in range(3):
    loss = model.loss(data)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
