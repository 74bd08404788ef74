# message: one of the variables needed for gradient computation has been modified by an inplace operation:
#   [torch.FloatTensor [4, 2]], which is output 0 of AsStrided, is at version 5; expected version 4
#   instead. Hint: enable anomaly detection to find the operation that failed to compute its
#   gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 10
# trigger: a causal max pooling written by hand in a module's forward fills a preallocated tensor
#   step by step, running[:, t] = torch.maximum(running[:, t - 1], h[:, t]); maximum saved the
#   previous step's slice, and the next step's write bumps the version of the tensor it is a view of
# source: none found; the pattern as users write it (running maxima / cumulative pooling before torch.cummax)
# results: losses, model
import torch
from torch import nn


class RunningMaxPool(nn.Module):
    """The running maximum over the time steps of a projected sequence."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 2)

    def forward(self, seq):
        h = self.proj(seq)
        steps = [h[:, 0]]
        for t in range(1, h.shape[1]):
            steps.append(torch.maximum(steps[-1], h[:, t]))  # PRIMARY
        return torch.stack(steps, dim=1)


torch.manual_seed(0)
model = RunningMaxPool()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
seq, target = torch.randn(4, 5, 3), torch.randn(4, 5, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(seq) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
