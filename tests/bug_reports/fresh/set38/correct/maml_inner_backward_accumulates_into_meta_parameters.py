"""MAML on sine regression, written with a hand-made functional model: each task copies the meta
model with `same_var=True` (the copy holds the very same parameter tensors), takes the inner step
from `param.grad` after `loss.backward(create_graph=True)`, evaluates the adapted copy on a fresh
batch with another backward, and then steps the meta optimizer. Because the inner backward runs on
the meta parameters themselves, it leaves the inner loss's gradient in their `.grad`, and the outer
backward adds the meta-gradient on top of it: the meta update follows d(inner loss) + d(query
loss after adaptation) instead of the MAML gradient alone. Nothing raises. The fix: take the inner
gradient with `torch.autograd.grad(..., create_graph=True)`, which does not touch `.grad`.
Source: https://github.com/AdrienLE/ANIML/issues/3
expect: silent"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SineTask:
    def __init__(self, amplitude, phase):
        self.amplitude = amplitude
        self.phase = phase

    def sample(self, n):
        x = torch.rand(n, 1) * 10 - 5
        return x, self.amplitude * torch.sin(x + self.phase)


class SineModel:
    def __init__(self):
        self.params_ = {
            "w1": nn.Parameter(torch.randn(1, 20) * 0.5),
            "b1": nn.Parameter(torch.zeros(20)),
            "w2": nn.Parameter(torch.randn(20, 1) * 0.2),
            "b2": nn.Parameter(torch.zeros(1)),
        }

    def params(self):
        return list(self.params_.values())

    def named_params(self):
        return list(self.params_.items())

    def set_param(self, name, value):
        self.params_[name] = value

    def copy(self, other, same_var=False):
        for name, param in other.named_params():
            self.params_[name] = param if same_var else param.detach().clone().requires_grad_()

    def forward(self, x):
        h = torch.relu(x @ self.params_["w1"] + self.params_["b1"])
        return h @ self.params_["w2"] + self.params_["b2"]


def sine_loss(model, task):
    x, y = task.sample(10)
    return F.mse_loss(model.forward(x), y)


def sine_fit1(model, task, create_graph=False, force_new=False):
    loss = sine_loss(model, task)
    loss.backward(create_graph=create_graph, retain_graph=True)
    return loss


SINE_TRAIN = [SineTask(0.5 + 4.5 * torch.rand(1).item(), math.pi * torch.rand(1).item()) for _ in range(8)]


def maml_sine(model, epochs, lr_inner=0.01, batch_size=1, first_order=False):
    optimizer = torch.optim.Adam(model.params(), lr=1e-3)
    query_losses = []
    for _ in range(epochs):
        for i, t in enumerate(SINE_TRAIN):
            new_model = SineModel()
            new_model.copy(model, same_var=True)
            loss = sine_loss(new_model, t)
            grads = torch.autograd.grad(loss, new_model.params(), create_graph=not first_order)
            for (name, param), grad in zip(new_model.named_params(), grads):
                if first_order:
                    grad = grad.detach()
                new_model.set_param(name, param - lr_inner * grad)

            query_losses.append(sine_fit1(new_model, t, force_new=True).detach())

            if (i + 1) % batch_size == 0:
                optimizer.step()
                optimizer.zero_grad()
    return torch.stack(query_losses)


meta_model = SineModel()
losses = maml_sine(meta_model, 2)

result = {"query_losses": losses, "params": [p.detach().clone() for p in meta_model.params()]}
