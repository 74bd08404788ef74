# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an
#   issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# helpers: lib_activation_codec.py
# set: 19
# trigger: a trainer stores saved activations in float16 through saved_tensors_hooks from a library
#   helper, entered around its whole training step; a Jacobian regulariser inside the step takes the
#   model's input Jacobian at one example with torch.func.jacrev
# source: none found; the pattern as users write it
# results: model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch.func import functional_call, jacrev

from lib_activation_codec import compressed_activations


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def jacobian_penalty(self, x):
        params = dict(self.model.named_parameters())
        jac = jacrev(lambda xi: functional_call(self.model, params, (xi,)))(x[0])
        return jac.pow(2).sum()

    def step(self, x, y):
        with compressed_activations():
            self.optimizer.zero_grad()
            penalty = self.jacobian_penalty(x)  # PRIMARY
            loss = (self.model(x) - y).pow(2).mean() + 0.01 * penalty
            loss.backward()
            self.optimizer.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
trainer = Trainer(model)
for _ in range(2):
    trainer.step(torch.randn(5, 3), torch.randn(5, 2))
