"""A histogram model keeps its probability vector as one parameter, `self.param.pdfvec`, and hands
out small accessor objects for single bins whose `value` setter writes the bin in place,
`self.param.pdfvec[self.key] = value`. The training loop fits the vector to observed frequencies
and, after each optimizer step, pins the reference bin back to its prior through that setter. The
assignment writes into a view of a leaf that requires grad while grad mode is on: "a view of a leaf
Variable that requires grad is being used in an in-place operation". The article's fix writes the
bin under `torch.no_grad()` (the value is set, not learned).
Source: https://openillumi.com/en/en-pytorch-autograd-view-leaf-error-fix
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

n_bins = 6


class PdfParam(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.pdfvec = nn.Parameter(torch.rand(n) / n)


class BinAccessor:
    def __init__(self, param, key):
        self.param = param
        self.key = key

    @property
    def value(self):
        return self.param.pdfvec[self.key]

    @value.setter
    def value(self, value):
        with torch.no_grad():
            self.param.pdfvec[self.key] = value


model = PdfParam(n_bins)
reference_bin = BinAccessor(model, 0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
observed = torch.softmax(torch.randn(n_bins), dim=0)

losses = []
for step in range(6):
    optimizer.zero_grad()
    pdf = model.pdfvec / model.pdfvec.sum()
    loss = ((pdf - observed) ** 2).sum() + 0.1 * (model.pdfvec.sum() - 1.0) ** 2
    loss.backward()
    optimizer.step()
    reference_bin.value = 1.0 / n_bins
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "pdfvec": model.pdfvec.detach().clone()}
