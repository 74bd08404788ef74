# message: You tried to vmap over RoundThrough, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True.
# code: AD232 (catalogue: function_without_vmap_rule)
# helpers: lib_rounding.py
# set: 17
# trigger: a noise-robust training loss averages the model's loss over several Gaussian input
#   perturbations drawn at once and mapped with torch.vmap over the noise samples (not the batch); the
#   model's quantised layer (lib_rounding.py) rounds its weight with a straight-through Function
#   (forward and setup_context apart) that has no vmap rule
# source: none found; the pattern as users write it (vmap instead of a Python loop over noise draws)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_rounding import QuantisedLinear  # noqa: E402


class NoisyTrainer:
    def __init__(self, model, samples=4, sigma=0.1):
        self.model = model
        self.samples = samples
        self.sigma = sigma
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def robust_loss(self, x, y):
        noise = torch.randn(self.samples, *x.shape) * self.sigma

        def loss_under(eps):
            return nn.functional.mse_loss(self.model(x + eps), y)

        return torch.vmap(loss_under)(noise).mean()

    def fit(self, batches):
        losses = []
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = self.robust_loss(x, y)
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())
        return losses


torch.manual_seed(0)
model = nn.Sequential(QuantisedLinear(4, 8), nn.Tanh(), nn.Linear(8, 1))
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(3)]
losses = NoisyTrainer(model).fit(batches)
