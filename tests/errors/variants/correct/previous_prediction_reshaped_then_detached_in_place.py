# message: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel
#   (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP
#   buckets, and hence detach_() cannot be called on these gradients. To fix this error, please
#   refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.
# code: AD108 (catalogue: detach_view_inplace)
# set: 10
# trigger: an autoregressive forecaster feeds each prediction back as the next input without its
#   graph, reshaping it to a column first: value = pred.view(-1, 1).detach_() (a view detached in place)
# source: none found; the pattern as users write it (feeding predictions back in autoregressive decoding)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(1, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, first, steps):
        h = torch.zeros(first.shape[0], 4)
        value = first
        predictions = []
        for _ in range(steps):
            h = self.cell(value, h)
            prediction = self.out(h).squeeze(-1)
            predictions.append(prediction)
            value = prediction.view(-1, 1).detach()  # PRIMARY
        return torch.stack(predictions, dim=1)


torch.manual_seed(0)
model = Forecaster()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
first, target = torch.randn(5, 1), torch.randn(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(first, 3), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
