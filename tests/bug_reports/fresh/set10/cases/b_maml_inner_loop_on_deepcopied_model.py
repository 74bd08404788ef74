"""MAML for sine-wave regression, adapted from a minimal MAML implementation whose model was a
hand-written parameterized function. To use an ordinary `nn.Module`, the inner loop adapts a
`copy.deepcopy(self.model)`: the adapted weights are built from the copy's parameters, which are
new leaves with no graph back to the meta-model. The meta-gradient
`torch.autograd.grad(meta_loss, self.model.parameters())` then fails with "One of the
differentiated Tensors appears to not have been used in the graph".
Source: https://github.com/vmikulik/maml-pytorch/issues/2 ("I'm trying to do a deepcopy instead
of the parameterized model ... RuntimeError: One of the differentiated Tensors appears to not
have been used in the graph"; the answer: "Unless carefully done, deepcopy breaks the
computational graph").
expect: raises"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


def sample_task(n=10):
    amplitude, phase = torch.rand(1) * 4.9 + 0.1, torch.rand(1) * torch.pi
    x = torch.rand(2 * n, 1) * 10 - 5
    y = amplitude * torch.sin(x + phase)
    return x[:n], y[:n], x[n:], y[n:]


class MAML:
    def __init__(self, model, inner_lr=0.01, meta_lr=1e-3, tasks_per_meta_batch=3):
        self.model = model
        self.inner_lr = inner_lr
        self.tasks_per_meta_batch = tasks_per_meta_batch
        self.meta_optimiser = torch.optim.Adam(self.model.parameters(), meta_lr)

    def inner_loop(self, task):
        x_support, y_support, x_query, y_query = task
        temp_model = copy.deepcopy(self.model)
        temp_weights = dict(temp_model.named_parameters())
        loss = F.mse_loss(functional_call(temp_model, temp_weights, (x_support,)), y_support)
        grads = torch.autograd.grad(loss, list(temp_weights.values()), create_graph=True)
        temp_weights = {name: w - self.inner_lr * g for (name, w), g in zip(temp_weights.items(), grads)}
        return F.mse_loss(functional_call(temp_model, temp_weights, (x_query,)), y_query)

    def main_loop(self, num_iterations):
        meta_losses = []
        for iteration in range(num_iterations):
            meta_loss = sum(self.inner_loop(sample_task()) for _ in range(self.tasks_per_meta_batch))
            meta_loss = meta_loss / self.tasks_per_meta_batch
            meta_grads = torch.autograd.grad(meta_loss, list(self.model.parameters()))
            for w, g in zip(self.model.parameters(), meta_grads):
                w.grad = g
            self.meta_optimiser.step()
            meta_losses.append(meta_loss.detach())
        return meta_losses


model = nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(), nn.Linear(40, 1))
maml = MAML(model)
losses = maml.main_loop(num_iterations=3)
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
