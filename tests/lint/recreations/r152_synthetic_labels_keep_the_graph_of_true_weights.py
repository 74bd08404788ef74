"""A from-scratch fully connected network (a "deep learning by hand"
notebook): the synthetic regression labels are made from "true" weights
created with `requires_grad=True`, `Y = torch.mm(X, true_W) + true_b`, so
every label batch the hand-written data loader yields carries that graph.
The first `l.backward()` frees it, and the second batch's backward runs
into it again ("Trying to backward through the graph a second time"); the
notebook's fix makes the labels without a graph (`true_W` without
`requires_grad`, or `Y.detach()`).
Source: https://github.com/zhangyu2234/Deep-learning-by-hand (Chapter 1, "1.3 Problems I encountered.ipynb")"""
import random

import torch


class DataLoader:
    def __init__(self, X, Y, batch_size, shuffle=True):
        self.X, self.Y = X, Y
        self.batch_size = batch_size
        self.shuffle = shuffle

    def __iter__(self):
        indices = list(range(len(self.X)))
        if self.shuffle:
            random.shuffle(indices)
        for i in range(0, len(indices), self.batch_size):
            batch = torch.tensor(indices[i:i + self.batch_size])
            yield self.X[batch], self.Y[batch]


def relu(x):
    return torch.max(x, torch.zeros_like(x))


def loss(y_hat, y):
    return ((y_hat - y.reshape(y_hat.shape)) ** 2 / 2).sum()


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def fc(x, w, b):
    return relu(torch.mm(x, w) + b)


def train(num_samples=40, num_features=2, num_hiddens=2, batch_size=20, lr=0.01, num_epochs=2):
    X = torch.randn((num_samples, num_features), dtype=torch.float32)
    true_W = torch.randn((num_hiddens, 1), requires_grad=True, dtype=torch.float32)
    true_b = torch.randn(1, requires_grad=True, dtype=torch.float32)
    Y = torch.mm(X, true_W) + true_b
    W = torch.normal(0, 0.01, size=(num_hiddens, 1), requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    dataloader = DataLoader(X, Y, batch_size, shuffle=True)
    for epoch in range(num_epochs):
        for x, y in dataloader:
            l = loss(fc(x, W, b), y)
            l.backward()  # missed: ADL019
            sgd([W, b], lr, batch_size)


def run():
    torch.manual_seed(0)
    random.seed(0)
    train()
