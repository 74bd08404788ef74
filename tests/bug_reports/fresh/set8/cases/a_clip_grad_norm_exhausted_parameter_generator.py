"""A training loop that logs each parameter's gradient norm and then clips the gradients: both use
`params_to_clip = model.parameters()`, a generator. The logging loop consumes it, so
`clip_grad_norm_` receives an empty generator, clips nothing, and the optimizer steps with the
unclipped gradients (no error; recent PyTorch only warns).
Source: https://github.com/pytorch/pytorch/issues/148259 ("Raise a warning when
`torch.nn.utils.clip_grad_norm_` receives an exhausted generator": "no clipping is performed, but
no warning or error is raised"; the parameters to clip must be a list).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs = torch.randn(16, 10)
targets = torch.randn(16, 1) * 20
max_norm = 1.0
losses, grad_norms = [], []
for step in range(4):
    outputs = model(inputs)
    loss = criterion(outputs, targets)
    optimizer.zero_grad()
    loss.backward()
    params_to_clip = model.parameters()
    grad_norms.append(torch.stack([p.grad.norm() for p in params_to_clip]))
    torch.nn.utils.clip_grad_norm_(params_to_clip, max_norm)
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "grad_norms": grad_norms, "params": [p.detach().clone() for p in model.parameters()]}
