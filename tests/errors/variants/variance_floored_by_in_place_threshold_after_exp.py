# message: one of the variables needed for gradient computation has been modified by an inplace operation:
#   [torch.FloatTensor [6, 2]], which is output 0 of Exp, is at version 1; expected version 0
#   instead. Hint: enable anomaly detection to find the operation that failed to compute its
#   gradient, with torch.autograd.set_detect_anomaly(True).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 14
# trigger: a heteroscedastic regression head predicts a log-variance and floors the variance
#   exp(log_var) with nn.Threshold(1e-3, 1e-3, inplace=True), a library module that writes into
#   exp's result, which exp saved for its gradient
# source: none found; the pattern as users write it (inplace=True modules to save memory)
# results: model, losses
import torch
from torch import nn


class GaussianHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 8), nn.Tanh())
        self.mean = nn.Linear(8, 2)
        self.log_var = nn.Linear(8, 2)
        self.floor = nn.Threshold(1e-3, 1e-3, inplace=True)  # PRIMARY

    def forward(self, x):
        h = self.body(x)
        return self.mean(h), self.floor(torch.exp(self.log_var(h)))


torch.manual_seed(0)
model = GaussianHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(6, 3), torch.randn(6, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    mean, var = model(x)
    loss = nn.functional.gaussian_nll_loss(mean, y, var)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
