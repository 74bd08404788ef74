# message: one of the variables needed for gradient computation has been modified by an inplace operation
# code: AD101 (catalogue: saved_tensor_modified)
# trigger: a gating module's forward scales sigmoid's output (which sigmoid saved) in place; the
#   loss is made in a training-step helper and backward() runs at the top level
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, mask):
        out = torch.sigmoid(self.proj(x))
        out = out * mask  # PRIMARY
        return out


def train_step(model, batch, mask):
    return model(batch, mask).pow(2).mean()


torch.manual_seed(0)
model = Gate()
batch = torch.randn(5, 4)
mask = (torch.rand(5, 4) > 0.5).float()
loss = train_step(model, batch, mask)
loss.backward()
