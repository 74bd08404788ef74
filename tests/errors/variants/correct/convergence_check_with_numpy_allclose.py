# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 12
# trigger: a fitting loop stops early when the predictions no longer change, checked with
#   np.allclose(previous, prediction) on the model's outputs (NumPy converts the tensors)
# source: none found; the pattern as users write it (NumPy convergence checks on model outputs)
# results: losses, model, converged
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
previous = torch.zeros(6, 1)
losses = []
converged = False
for _ in range(2):
    optimizer.zero_grad()
    prediction = model(x)
    loss = (prediction - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    converged = bool(np.allclose(previous, prediction.detach(), atol=1e-4))  # PRIMARY
    previous = prediction.detach()
