import numpy as np
import torch
import torch.nn as nn


def fit(model, x, y, opt):
    out = model(x)
    err = np.abs(out.detach().numpy() - y.numpy())  # BUG34
    loss = torch.from_numpy(err).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()


def run():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    fit(model, torch.randn(5, 3), torch.randn(5, 1), opt)
