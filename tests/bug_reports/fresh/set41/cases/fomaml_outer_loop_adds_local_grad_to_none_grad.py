"""First-order MAML (FOMAML), written after a meta-learning tutorial: each task adapts a
`deepcopy` of the meta-model with its own SGD optimizer, the query loss is backpropagated through
the adapted copy, and the outer loop adds the copy's gradients to the meta-model's,
`p_global.grad += p_local.grad`. The meta-model itself never took part in a backward, so its
`.grad` is None (the meta-optimizer's `zero_grad()` also sets them back to None), and the sum fails
with "unsupported operand type(s) for +=: 'NoneType' and 'Tensor'". The change, from the thread:
start the meta-gradient from zeros where it is None, then accumulate.
Source: https://discuss.pytorch.org/t/the-computation-graph-is-breaking-in-the-outer-loop-of-meta-learning-meta-gradients-are-none-fomaml/192471
expect: raises"""
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class FOMAML:
    def __init__(self, model, lr_inner=0.1, lr_outer=0.01, num_inner_steps=2):
        self.model = model
        self.lr_inner = lr_inner
        self.num_inner_steps = num_inner_steps
        self.optimizer = optim.Adam(self.model.parameters(), lr=lr_outer)

    def adapt_few_shot(self, support_x, support_y):
        local_model = deepcopy(self.model)
        local_model.train()
        local_optim = optim.SGD(local_model.parameters(), lr=self.lr_inner)
        local_optim.zero_grad()
        for _ in range(self.num_inner_steps):
            loss = F.mse_loss(local_model(support_x), support_y)
            loss.backward()
            local_optim.step()
            local_optim.zero_grad()
        return local_model

    def outer_loop(self, tasks):
        losses = []
        self.optimizer.zero_grad()
        for support_x, support_y, query_x, query_y in tasks:
            local_model = self.adapt_few_shot(support_x, support_y)
            loss = F.mse_loss(local_model(query_x), query_y)
            loss.backward()
            losses.append(loss.detach())
            for p_global, p_local in zip(self.model.parameters(), local_model.parameters()):
                p_global.grad += p_local.grad  # First-order approx. -> add gradients of finetuned and base model
        self.optimizer.step()
        return torch.stack(losses).mean()


def sine_task():
    amplitude = torch.rand(1) * 4 + 1
    phase = torch.rand(1) * 3
    x = torch.rand(20, 1) * 10 - 5
    y = amplitude * torch.sin(x + phase)
    return x[:10], y[:10], x[10:], y[10:]


model = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 1))
learner = FOMAML(model)
meta_losses = []
for iteration in range(3):
    tasks = [sine_task() for _ in range(4)]
    meta_losses.append(learner.outer_loop(tasks))

result = {"meta_losses": torch.stack(meta_losses), "params": [p.detach().clone() for p in model.parameters()]}
