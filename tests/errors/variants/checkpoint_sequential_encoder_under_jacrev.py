# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an
#   issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 13
# trigger: an encoder checkpoints its layers with checkpoint_sequential(..., use_reentrant=False) in
#   forward; a Jacobian regulariser takes the encoder's Jacobian at one example with torch.func.jacrev
# source: after https://github.com/pytorch/pytorch/issues/141845 (jacrev of a checkpointed model for
#   input-output sensitivity)
# results: losses, encoder
import torch
from torch import nn
from torch.func import jacrev
from torch.utils.checkpoint import checkpoint_sequential


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))

    def forward(self, x):
        return checkpoint_sequential(self.layers, 2, x, use_reentrant=False)  # PRIMARY


torch.manual_seed(0)
encoder = Encoder()
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
x, y = torch.randn(3), torch.randn(2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    jacobian = jacrev(encoder)(x)
    loss = (encoder(x) - y).pow(2).mean() + 0.01 * jacobian.pow(2).sum()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
