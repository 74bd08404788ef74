# message: vmap: index_add_(self, *extra_args) is not possible because there exists a Tensor `other` in
#   extra_args that has more elements than `self`. This happened due to `other` being vmapped over
#   but `self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of
#   index_add_.
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 12
# trigger: a soft histogram of one example's values adds the soft counts into torch.zeros(bins) with
#   index_add_; a module maps it over the batch with torch.func.vmap
# source: none found; the pattern as users write it (per-example scatter into a fresh zeros tensor)
# results: losses, model
import torch
from torch import nn
from torch.func import vmap

BINS = torch.tensor([0, 1, 1, 2])


def soft_histogram(weights):
    counts = torch.zeros(3)  # PRIMARY
    counts.index_add_(0, BINS, weights)
    return counts


class HistogramHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.scores = nn.Linear(2, 4)

    def forward(self, x):
        return vmap(soft_histogram)(torch.softmax(self.scores(x), dim=1))


torch.manual_seed(0)
model = HistogramHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 2), torch.rand(5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
