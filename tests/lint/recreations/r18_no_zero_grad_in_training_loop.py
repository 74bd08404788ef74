"""A training loop without `zero_grad()`: each step uses the sum of every past
gradient (found while measuring precision; no error is raised).
Source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/distributed/tensor_parallelism/tensor_parallel_example.py#L114-L121"""
import torch
import torch.nn as nn

model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train(steps):
    for _ in range(steps):
        output = model(torch.ones(2, 3))
        output.sum().backward()
        optimizer.step()  # expect: ADL018


def bug_shows() -> bool:
    """After three iterations the weight's gradient is three single gradients."""
    model.weight.grad = None
    train(3)
    single = torch.full((1, 3), 2.0)  # d(sum of outputs)/dW for two rows of ones
    return torch.equal(model.weight.grad, 3 * single)
