"""Wrong: the criterion module only computes the loss (its forward runs no backward);
the loop clears, computes the loss and steps without backpropagating: the step
applies no gradients (ADL026 at `opt.step()`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PlainCriterion(nn.Module):
    def forward(self, output, target):
        return F.mse_loss(output, target)


def fit(batches, lr=0.1):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    criterion = PlainCriterion()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in batches:
        opt.zero_grad()
        out = model(x)
        loss = criterion(out, y)
        opt.step()
    return model, loss


def run():
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    return fit(batches)
