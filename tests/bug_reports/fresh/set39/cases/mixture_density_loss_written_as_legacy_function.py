"""Handwriting synthesis (Graves 2013): the mixture-density loss over the RNN's outputs is
written as a `torch.autograd.Function` subclass with an `__init__` and an instance `forward`
that calls `self.save_for_backward`, and no `backward`; the asker wanted to know whether autograd
would differentiate it without a hand-written backward. Called as `Loss()(x, para)`, current
PyTorch refuses the class: "Legacy autograd function with non-static forward method is
deprecated". The answer: a loss built from differentiable tensor operations needs no backward;
write it as an `nn.Module` (or a plain function) and autograd differentiates it.
Source: https://discuss.pytorch.org/t/when-backward-can-be-safely-omitted/1284
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

n_mix, hidden = 5, 32


class Loss(torch.autograd.Function):
    def __init__(self):
        self.eps = 1e-6

    def forward(self, x, para):
        self.save_for_backward(para)
        e = torch.sigmoid(-para[:, :, 0])
        pi = torch.softmax(para[:, :, 1:1 + n_mix], dim=-1)
        m1, m2 = para[:, :, 1 + n_mix:1 + 2 * n_mix], para[:, :, 1 + 2 * n_mix:1 + 3 * n_mix]
        s1 = torch.exp(para[:, :, 1 + 3 * n_mix:1 + 4 * n_mix])
        s2 = torch.exp(para[:, :, 1 + 4 * n_mix:1 + 5 * n_mix])
        rho = torch.tanh(para[:, :, 1 + 5 * n_mix:1 + 6 * n_mix])
        x1, x2, et = x[:, :, 0:1], x[:, :, 1:2], x[:, :, 2]
        z1, z2 = (x1 - m1) / s1, (x2 - m2) / s2
        z = z1 ** 2 + z2 ** 2 - 2 * rho * z1 * z2
        one_minus = 1 - rho ** 2
        normal = torch.exp(-z / (2 * one_minus)) / (2 * math.pi * s1 * s2 * torch.sqrt(one_minus))
        mixture = torch.sum(pi * normal, dim=-1)
        stroke = e * et + (1 - e) * (1 - et)
        return -torch.mean(torch.log(mixture + self.eps) + torch.log(stroke + self.eps))


rnn = nn.LSTM(3, hidden, batch_first=True)
head = nn.Linear(hidden, 1 + 6 * n_mix)
optimizer = torch.optim.Adam(list(rnn.parameters()) + list(head.parameters()), lr=1e-3)
strokes = torch.cat([torch.randn(4, 12, 2) * 0.5, (torch.rand(4, 12, 1) < 0.2).float()], dim=-1)

losses = []
for step in range(3):
    out, _ = rnn(strokes[:, :-1])
    para = head(out)
    loss = Loss()(strokes[:, 1:], para)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in head.parameters()]}
