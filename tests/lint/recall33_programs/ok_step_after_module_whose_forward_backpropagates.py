"""Correct: the criterion is a module whose inherited `forward` backpropagates the
loss it computes (a self-stepping criterion, in the shape of a sharded loss
computer); the training loop clears, calls the criterion, then steps.  ADL026 must
stay silent: the call between the clear and the step runs the backward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BackpropCriterion(nn.Module):
    def __init__(self, scale=1.0):
        super().__init__()
        self.scale = scale

    def forward(self, output, target):
        loss = F.mse_loss(output, target) * self.scale
        loss.backward()
        return loss.item()


class WeightedCriterion(BackpropCriterion):
    pass


def fit(batches, lr=0.1):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    criterion = WeightedCriterion(scale=0.5)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    history = []
    for x, y in batches:
        opt.zero_grad()
        out = model(x)
        history.append(criterion(out, y))
        opt.step()
    return model, history


def run():
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    return fit(batches)
