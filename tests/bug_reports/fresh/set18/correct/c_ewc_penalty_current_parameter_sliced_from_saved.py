"""The current parameter is sliced from itself (`current = parameter[:units]`), as the maintainers'
fix does, so the penalty holds task A's weights.
Source: https://github.com/ContinualAI/avalanche/issues/1099."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

EWC_WEIGHT = 50.0

model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
task_a = (torch.randn(32, 6), torch.randint(0, 3, (32,)))
task_b = (torch.randn(32, 6) + 1.0, torch.randint(0, 3, (32,)))

for step in range(5):
    optimizer.zero_grad()
    F.cross_entropy(model(task_a[0]), task_a[1]).backward()
    optimizer.step()

optimizer.zero_grad()
F.cross_entropy(model(task_a[0]), task_a[1]).backward()
importance = {name: p.grad.detach().pow(2) for name, p in model.named_parameters()}
saved = {name: p.detach().clone() for name, p in model.named_parameters()}


def ewc_penalty(model):
    penalty = 0.0
    for name, parameter in model.named_parameters():
        saved_parameter = saved[name]
        units = saved_parameter.shape[0]
        current = parameter[:units]
        penalty = penalty + (importance[name][:units] * (current - saved_parameter).pow(2)).sum()
    return penalty


losses = []
for step in range(5):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(task_b[0]), task_b[1]) + EWC_WEIGHT * ewc_penalty(model)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
