# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# set: 2
# trigger: a module applies nn.Hardtanh(inplace=True) to a sigmoid output; sigmoid saved its output
#   for backward, and the in-place module writes it
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class Squash(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.clip = nn.Hardtanh(0.2, 0.8, inplace=True)

    def forward(self, x):
        return self.clip(torch.sigmoid(self.fc(x)))  # PRIMARY


torch.manual_seed(0)
model = Squash()
loss = model(torch.randn(4, 3)).pow(2).mean()
loss.backward()
