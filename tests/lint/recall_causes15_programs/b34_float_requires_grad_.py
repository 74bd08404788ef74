import torch
import torch.nn as nn
import torch.nn.functional as F


def step(model, opt, x, y):
    loss = torch.tensor(float(F.mse_loss(model(x), y))).requires_grad_()  # BUG34
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.clone()
    step(model, opt, torch.randn(4, 3), torch.randn(4, 1))
    return torch.equal(before, model.weight)
