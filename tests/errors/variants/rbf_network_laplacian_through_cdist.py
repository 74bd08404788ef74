# message: the derivative for '_cdist_backward' is not implemented.
# code: AD184 (catalogue: cdist_second_derivative)
# set: 15
# trigger: a physics-informed radial-basis-function network (Gaussian of torch.cdist distances to
#   learned centres) is trained on a Poisson residual: the second derivative of its output comes from
#   two torch.autograd.grad(create_graph=True) calls, then backward() goes through them
# source: none found; the pattern as users write it (RBF networks for PDE residuals)
# results: model.centres, model.weights, losses
import torch
from torch import nn


class RBFNet(nn.Module):
    def __init__(self, centres):
        super().__init__()
        self.centres = nn.Parameter(centres)
        self.weights = nn.Parameter(torch.randn(len(centres), 1) * 0.1)

    def forward(self, x):
        distances = torch.cdist(x, self.centres)  # PRIMARY
        return torch.exp(-distances ** 2) @ self.weights


torch.manual_seed(0)
model = RBFNet(torch.linspace(-1, 1, 6).unsqueeze(1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
losses = []
for step in range(2):
    x = torch.rand(10, 1) * 2 - 1
    x.requires_grad_(True)
    u = model(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
    loss = (d2u + torch.sin(x)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
