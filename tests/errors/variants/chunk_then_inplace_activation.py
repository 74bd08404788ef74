# message: Output 1 of Split is a view and its base or another view of its base has been modified inplace.
# code: AD138 (catalogue: split_base_modified)
# trigger: a VAE-style encoder splits its projection into mean and log-variance with chunk(),
#   then applies an in-place ReLU module to the whole projection before using the pieces
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.proj(x)
        mean, log_var = h.chunk(2, dim=1)
        h = self.act(h)  # PRIMARY
        return mean * torch.exp(0.5 * log_var) + h.sum(1, keepdim=True)


torch.manual_seed(0)
model = Encoder()
loss = model(torch.randn(5, 3)).pow(2).mean()
loss.backward()
