# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 5
# trigger: a physics-informed network's residual method takes du/dt with torch.autograd.grad of
#   the network's [N, 1] output without grad_outputs
# source: none found; the pattern as users write it (PINN residuals)
# results: losses, model
import torch
from torch import nn


class DecayPINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
        self.rate = 0.5

    def forward(self, t):
        return self.net(t)

    def residual(self, t):
        u = self(t)
        du_dt, = torch.autograd.grad(u, t, create_graph=True)  # PRIMARY
        return du_dt + self.rate * u


torch.manual_seed(0)
model = DecayPINN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
t = torch.linspace(0, 1, 6).reshape(-1, 1).requires_grad_(True)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.residual(t).pow(2).mean() + (model(torch.zeros(1, 1)) - 1).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
