"""The correlation-regularised classifier of corr_based_prediction clears the
gradients once, before the epoch's loop (`optimizer.zero_grad()` at the top
of `train`), and then backpropagates and steps on every batch.  Each step
applies the sum of all the gradients of the epoch so far, not the batch's.
Nothing raises.  The fix clears the gradients inside the loop, once per
step.
Buggy line: `optimizer.step()` in `train`, with the only clear above the
loop.
Expected finding: ADL018 (a training loop that never clears the gradients it
steps on).
Source: https://github.com/salesforce/corr_based_prediction/issues/1"""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(5, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x, ret_hid=False):
        hid = torch.relu(self.hidden(x))
        out = self.out(hid)
        return (out, hid) if ret_hid else out


def correlation_reg(hid, targets):
    centered = hid - hid.mean(dim=0, keepdim=True)
    covariance = centered.t() @ centered / hid.shape[0]
    return covariance.pow(2).mean()


def train(model, optimizer, trainloader, beta=0.1):
    criterion = nn.CrossEntropyLoss()
    model.train()
    optimizer.zero_grad()
    for inputs, targets in trainloader:
        outputs, hid_repr = model(inputs, ret_hid=True)
        loss = criterion(outputs, targets)
        total_loss_ = loss + beta * correlation_reg(hid_repr, targets)
        total_loss_.backward()
        optimizer.step()  # expect: ADL018


def bug_shows():
    """The second step applies the first batch's gradient again."""
    torch.manual_seed(1)
    loader = [(torch.randn(4, 5), torch.tensor([0, 1, 2, 0])) for _ in range(2)]
    torch.manual_seed(0)
    model = MLP()
    train(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)
    torch.manual_seed(0)
    reference = MLP()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    for inputs, targets in loader:
        ref_opt.zero_grad()
        outputs, hid = reference(inputs, ret_hid=True)
        (criterion(outputs, targets) + 0.1 * correlation_reg(hid, targets)).backward()
        ref_opt.step()
    return not torch.allclose(model.out.weight, reference.out.weight, atol=1e-6)
