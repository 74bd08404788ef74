import numpy as np
import torch
import torch.nn as nn


def dice(pred, mask):
    inter = (pred * mask).sum()
    return 2.0 * inter / (pred.sum() + mask.sum() + 1e-6)


def train(model, batches, opt):
    for x, mask in batches:
        prob = torch.sigmoid(model(x))
        score = dice(prob.detach().cpu().numpy(), mask.numpy())  # BUG34
        loss = torch.tensor(1.0 - score, requires_grad=True)
        opt.zero_grad()
        loss.backward()
        opt.step()


def run():
    torch.manual_seed(0)
    model = nn.Conv2d(1, 1, 3, padding=1)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    before = model.weight.clone()
    batches = [(torch.randn(2, 1, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()) for _ in range(2)]
    train(model, batches, opt)
    return torch.equal(before, model.weight)
