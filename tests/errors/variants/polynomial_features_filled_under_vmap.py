# message: vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a
#   Tensor `other` in extra_args that has more elements than `self`.
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 7
# trigger: a feature helper in another file (lib_polynomial.py) fills torch.empty(3) item by item
#   (features[1] = x); a module maps it over a batch of scalars with torch.func.vmap
# source: none found; the pattern as users write it
# helpers: lib_polynomial.py
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F
from torch.func import vmap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_polynomial import polynomial_features  # noqa: E402


class PolynomialRegression(nn.Module):
    def __init__(self):
        super().__init__()
        self.coefficients = nn.Linear(3, 1, bias=False)

    def forward(self, x):
        return self.coefficients(vmap(polynomial_features)(x))


torch.manual_seed(0)
model = PolynomialRegression()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.linspace(-1.0, 1.0, 6)
y = (0.5 + 2.0 * x - x ** 2).unsqueeze(1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
