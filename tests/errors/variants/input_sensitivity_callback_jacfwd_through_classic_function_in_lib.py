# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it must override the setup_context staticmethod. For more details, please see https://pytorch.org/docs/main/notes/extending.func.html
# code: AD231 (catalogue: function_without_setup_context)
# set: 30
# trigger: a validation callback measures the regressor's input sensitivity with torch.func.jacfwd
#   (forward mode) over functional_call of the model; the model's activation is a custom Function of a
#   helper in another file written in the classic style, forward(ctx, x), without setup_context
# source: none found; the pattern as users write it (an old-style Function met by a forward-mode transform)
# helpers: lib_activations30.py
# results: losses, sensitivities, model
import os
import sys

import torch
from torch import nn
from torch.func import functional_call, jacfwd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_activations30 import ScaledSoftsign  # noqa: E402


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 5)
        self.out = nn.Linear(5, 1)

    def forward(self, x):
        return self.out(ScaledSoftsign.apply(self.inp(x)))


class SensitivityCallback:
    def __init__(self, probe):
        self.probe = probe
        self.history = []

    def on_validation_end(self, model):
        params = {name: p.detach() for name, p in model.named_parameters()}

        def predict(x):
            return functional_call(model, params, (x,)).squeeze(-1)

        jacobian = jacfwd(predict)(self.probe)
        self.history.append(jacobian.norm())


torch.manual_seed(0)
model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
callback = SensitivityCallback(torch.randn(3))
losses = []
for _ in range(3):
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    callback.on_validation_end(model)
sensitivities = callback.history
