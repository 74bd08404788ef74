"""A notebook that learns the width `delta` of a Gaussian around a uniformly drawn centre: each
step draws `x`, builds `Normal(x, delta)`, draws `y` from it with `.sample()` and minimises the
squared distance between `y` and `x` with Adam. `.sample()` draws under no_grad, so `y` carries no
graph, the loss has no grad_fn and `loss.backward()` raises "element 0 of tensors does not require
grad and does not have a grad_fn". The notebook's own answer is the reparameterised draw
`normal.rsample()`, which keeps `delta` in the graph (y = x + eps * delta).
Source: https://github.com/allentsouhuang/SpiralNotebook ("Reparameterization Trick" notebook)
expect: raises"""
import torch
from torch.optim import Adam
from torch.nn import MSELoss

torch.manual_seed(0)

uniform = torch.distributions.Uniform(-1, 1)  # input
criterion = MSELoss()

delta = torch.tensor(1.0, requires_grad=True)
optimizer = Adam([delta], lr=0.05)
losses = []
for _ in range(25):
    optimizer.zero_grad()
    x = uniform.sample()
    normal = torch.distributions.Normal(x, delta)
    y = normal.sample()
    loss = criterion(y, x)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "delta": delta.detach().clone()}
