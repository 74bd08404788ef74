"""Image colorization trained with mixed precision (huggingface/accelerate issue, a custom colour
loss): the loss converts predicted and target colours with NumPy to measure a perceptual colour
difference, then wraps the number in `torch.tensor(..., requires_grad=True)` so that backward()
runs. It runs, but no parameter of the model gets a gradient, and the GradScaler's step raises
"AssertionError: No inf checks were recorded for this optimizer."
Source: https://github.com/huggingface/accelerate/issues/328 (custom colour-difference loss computed
outside torch, then `scaler.step(optimizer)` fails with "No inf checks were recorded for this
optimizer"; the loss has to be computed with torch operations on the model's output).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)

# weights of a simple opponent-colour space: lightness, red-green, blue-yellow
OPPONENT = np.array([[0.30, 0.59, 0.11], [0.50, -0.50, 0.00], [0.25, 0.25, -0.50]], dtype=np.float32)


def colour_difference(predicted, target):
    diff = (predicted - target).transpose(0, 2, 3, 1) @ OPPONENT.T
    return float(np.sqrt((diff ** 2).sum(-1) + 1e-8).mean())


def criterion(outputs, targets):
    value = colour_difference(outputs.detach().numpy(), targets.numpy())
    return torch.tensor(value, requires_grad=True)


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Sigmoid())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)

gray = torch.rand(4, 2, 1, 8, 8)
colour = torch.rand(4, 2, 3, 8, 8)

losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(model(gray[step]), colour[step])
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
