# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([6]) and output[0] has a shape of
#   torch.Size([6, 1]).
# code: AD123 (catalogue: grad_outputs_shape)
# set: 14
# trigger: a physics-informed network u(x, t) returns a column [N, 1]; the PDE residual takes
#   du/dx with torch.autograd.grad(u, x, grad_outputs=torch.ones(x.shape[0]), create_graph=True),
#   the ones made from the number of points
# source: none found; the pattern as users write it (PINN tutorials use torch.ones_like(u))
# results: model, losses
import torch
from torch import nn


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))

    def residual(self, x, t):
        u = self(x, t)
        du_dx, du_dt = torch.autograd.grad(u, (x, t), grad_outputs=torch.ones(x.shape[0]),  # PRIMARY
                                           create_graph=True)
        return du_dt + u * du_dx


torch.manual_seed(0)
model = PINN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, t = torch.rand(6, 1).requires_grad_(), torch.rand(6, 1).requires_grad_()
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.residual(x, t).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
