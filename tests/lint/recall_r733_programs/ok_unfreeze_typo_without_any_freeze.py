"""The near twin: the same misspelt `= True` on parameters that nothing in the file ever froze
(they require grad already): a no-op, with no effect on training; the rule stays silent."""
import torch
import torch.nn as nn


def train(model, batches):
    for p in model.parameters():
        p.require_grad = True
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    return model


def run():
    torch.manual_seed(0)
    return train(nn.Linear(3, 2), [(torch.randn(4, 3), torch.randn(4, 2))])
