"""A physics-informed fit: the derivative of the network's output with respect to its input is
taken without create_graph=True and fed to a loss module made on the spot (`nn.L1Loss()(...)`),
so the derivative term is a constant and trains nothing."""
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
t = torch.linspace(0, 1, 10).unsqueeze(1)
for _ in range(2):
    t.requires_grad_(True)
    u = net(t)
    du = torch.autograd.grad(u.sum(), t, retain_graph=True)[0]  # PRIMARY
    residual = nn.L1Loss()(du.mean(dim=1, keepdim=True), -u.detach())
    loss = nn.MSELoss()(u[:1], torch.ones(1, 1)) + residual
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in net.parameters()]
