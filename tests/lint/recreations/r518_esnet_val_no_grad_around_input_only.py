"""Efficient-Segmentation-Networks' `val()` was ported from `volatile=True`
by wrapping only the input's conversion in `torch.no_grad()`:
`with torch.no_grad(): input_var = Variable(input)`, then `output =
model(input_var)` outside the block.  The model's forward runs with
gradients on and every validation batch builds a graph; the pull request
"make torch.no_grad effective, avoid out of memory" moves the forward into
the block.  Nothing raises; the outputs carry graphs.
Buggy line: `output = model(input_var)` after the `with torch.no_grad():`
block in `val`.
Source: https://github.com/xiaoyufenfei/Efficient-Segmentation-Networks/pull/5"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable


class ENet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.initial = nn.Conv2d(3, 6, 3, padding=1)
        self.classifier = nn.Conv2d(6, classes, 1)

    def forward(self, x):
        return self.classifier(F.relu(self.initial(x)))


def val(args, val_loader, model, record=None):
    model.eval()
    total_batches = len(val_loader)
    data_list = []
    for i, (input, label, size, name) in enumerate(val_loader):
        with torch.no_grad():
            input_var = Variable(input)
        output = model(input_var)  # expect: ADL033
        if record is not None:
            record.append(output.requires_grad)
        output = output.cpu().data[0].numpy()
        gt = label[0].numpy()
        output = output.transpose(1, 2, 0).argmax(axis=2)
        data_list.append([gt.flatten(), output.flatten()])
    return data_list


def bug_shows():
    """The validation forward ran with gradients on."""
    torch.manual_seed(0)
    loader = [(torch.randn(1, 3, 4, 4), torch.randint(0, 3, (1, 4, 4)), (4, 4), "a") for _ in range(2)]
    record = []
    val(None, loader, ENet(), record=record)
    return all(record)
