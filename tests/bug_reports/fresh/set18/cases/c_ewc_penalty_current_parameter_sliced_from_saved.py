"""Elastic weight consolidation (EWC) for continual learning: after task A the parameters and
their Fisher importances are saved, and task B's loss adds `importance * (current - saved)^2`
so that the weights task A needs stay put. The penalty was written for heads that grow with new
classes, so the current parameter is cut to the saved one's size first, but the slice is taken
from the saved tensor (`current = saved[:units]`): the penalty is identically zero, task B
moves task A's weights freely, and nothing fails.
Source: https://github.com/ContinualAI/avalanche/issues/1099 ("in EWC the penalty is 0":
`cur_param = saved_param[:n_units]`; the maintainers: "It should be `cur_param =
cur_param[:n_units]`", fixed in #1101).
expect: silent"""
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
        current = saved_parameter[:units]
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
