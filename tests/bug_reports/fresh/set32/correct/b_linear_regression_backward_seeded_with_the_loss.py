"""pytorch_tutorial (sotte), notebook 01_pytorch_basics, "Linear Regression" training loop: the
loss is backpropagated with `loss.backward(loss)`. For a 0-dim loss this is legal (the seed has
the right shape) and nothing fails, but every gradient is multiplied by the current loss value,
so the SGD steps are scaled by the loss and the fitted line differs from plain gradient descent.
The author's fix: `loss.backward()`.
Source: https://github.com/sotte/pytorch_tutorial/issues/5
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

# toy data: y = 2x + 1 with noise
X = torch.linspace(-1, 1, 64).unsqueeze(1)
y = 2 * X + 1 + 0.1 * torch.randn_like(X)

model = nn.Linear(1, 1)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

losses = []
for epoch in range(30):
    y_pred = model(X)
    loss = criterion(y_pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "weight": model.weight.detach().clone(), "bias": model.bias.detach().clone()}
