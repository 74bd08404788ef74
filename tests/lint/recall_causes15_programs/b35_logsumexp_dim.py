import torch
import torch.nn as nn


def nll_step(model, opt, x):
    scores = model(x)
    nll = torch.logsumexp(scores, 1) - scores[:, 0]  # BUG35
    opt.zero_grad()
    nll.backward(retain_graph=False)
    opt.step()


def run():
    model = nn.Linear(5, 4)
    nll_step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.randn(3, 5))
