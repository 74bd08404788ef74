"""A near twin with a rebuild that is harmless: the running sum holds `.item()` numbers, the
tensor made from it is only logged, and the backward runs on the real loss."""
import torch
import torch.nn as nn


def train(model, batches, optimizer):
    running = 0.0
    history = []
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
        history.append(torch.tensor(running))
    return history


def trains():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    before = model.weight.detach().clone()
    train(model, [(torch.rand(4, 3), torch.rand(4, 1))], torch.optim.SGD(model.parameters(), lr=0.1))
    return not torch.equal(before, model.weight)
