"""A regression loop that clips the gradient norm right after zero_grad(set_to_none=False),
before backward() has computed the gradients: the clipping sees zeros, and every step applies
the unclipped gradients."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
inputs, targets = torch.randn(32, 5), torch.randn(32, 2) * 10
for _ in range(3):
    optimizer.zero_grad(set_to_none=False)
    prediction = model(inputs)
    nn.utils.clip_grad_norm_(model.parameters(), 0.5)  # PRIMARY
    nn.functional.mse_loss(prediction, targets).backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
