# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an
#   issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 12
# trigger: a model checkpoints its body (use_reentrant=False) in forward to save memory; a smoothness
#   penalty takes a vector-Jacobian product of the model at the inputs with torch.func.vjp
# source: none found; the pattern as users write it (checkpointed models under torch.func transforms)
# results: losses, model
import torch
from torch import nn
from torch.func import vjp
from torch.utils.checkpoint import checkpoint


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))

    def forward(self, x):
        return self.body(x)  # PRIMARY


torch.manual_seed(0)
model = Model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    out, pullback = vjp(model, x)
    (input_gradient,) = pullback(torch.ones_like(out))
    loss = (out - y).pow(2).mean() + 0.1 * input_gradient.pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
