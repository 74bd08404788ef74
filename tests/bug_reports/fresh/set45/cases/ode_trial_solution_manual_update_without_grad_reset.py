"""Solving du/dt = cos(2 pi t), u(0) = 1, with a two-layer tanh network f: the trial solution
g(t) = t * f(t) + 1 meets the boundary condition, and the loss is the squared gap between the
finite-difference slope of g and cos(2 pi t) over sample times. The weights W1, W2 are plain
tensors updated by hand, `W1.data -= learning_rate * W1.grad.data`, but their `.grad` is never
reset: every epoch's backward() adds to the gradients of all earlier epochs, so each update uses
their running sum; nothing fails. The change: clear both gradients after each update
(`W1.grad.data.zero_()`, `W2.grad.data.zero_()`), as a hand-written gradient-descent loop must.
Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (a mirror of the PyTorch Forums thread "Solving an ODE using PyTorch", 2021-07-20)
expect: silent"""
import torch
from torch.autograd import Variable

torch.manual_seed(0)


def f(x):
    l1 = torch.matmul(W1.T, x).reshape(-1, 1)
    l1_act = torch.tanh(l1)
    l2 = torch.matmul(W2.T, l1_act)
    return l2


def g(t):
    return t * f(t) + torch.tensor([1.])


def loss(t, eps):
    return torch.mean(((g(t + eps) - g(t)) / eps - torch.cos(2 * 3.14 * t)) ** 2)


eps = torch.tensor([0.000345])
T0 = 0
T1 = 1
nsamples = 20
t = torch.linspace(T0, T1, nsamples)

W1 = Variable(0.5 * torch.randn(1, 32), requires_grad=True)
W2 = Variable(0.5 * torch.randn(32, 1), requires_grad=True)

learning_rate = 1e-3
history = []
for it in range(40):
    err = 0
    for ti in t:
        ti = torch.tensor([ti])
        err += loss(ti, eps)
    err = err / nsamples
    err.backward()

    W1.data -= learning_rate * W1.grad.data
    W2.data -= learning_rate * W2.grad.data
    history.append(err.item())

result = {"history": torch.tensor(history), "W1": W1.detach().clone(), "W2": W2.detach().clone()}
