# message: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing
#   an `inputs` parameter to .backward(). To resolve this error, you can either set
#   use_reentrant=False, or call .backward() without passing the `inputs` argument.
# code: AD126 (catalogue: checkpoint_reentrant_grad)
# set: 7
# trigger: a physics-informed network checkpoints its hidden layers to save memory
#   (use_reentrant=True, the old default); the PDE residual needs du/dt from
#   torch.autograd.grad(u, t, create_graph=True)
# source: none found; the pattern as users write it (PINNs with gradient checkpointing)
# results: losses, net
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
        self.out = nn.Linear(8, 1)

    def forward(self, t):
        return self.out(checkpoint(self.inner, t, use_reentrant=False))  # PRIMARY


torch.manual_seed(0)
net = PINN()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
t = torch.linspace(0.0, 1.0, 8).unsqueeze(1).requires_grad_()
losses = []
for _ in range(2):
    optimizer.zero_grad()
    u = net(t)
    du_dt = torch.autograd.grad(u, t, torch.ones_like(u), create_graph=True)[0]
    loss = (du_dt + u).pow(2).mean() + (u[0] - 1.0).pow(2).sum()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
