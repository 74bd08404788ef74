# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# set: 31
# trigger: a pretrained speech enhancer is fine-tuned on one output gain only (a parameter of shape
#   (1,)); the backbone is frozen by a helper, and another helper in the same library file returns
#   the trainable parameters, unwrapping a list of one into the parameter itself
# source: none found; the pattern as users write it (a "convenience" unwrap of a one-element list)
# helpers: lib_finetune31.py
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_finetune31 import freeze, trainable_parameters  # noqa: E402


class Enhancer(nn.Module):
    def __init__(self, bins=8):
        super().__init__()
        self.mask = nn.Sequential(nn.Linear(bins, bins), nn.Sigmoid())
        self.gain = nn.Parameter(torch.ones(1))

    def forward(self, spectrum):
        return self.gain * self.mask(spectrum) * spectrum


torch.manual_seed(0)
model = Enhancer()
freeze(model.mask)
optimizer = torch.optim.Adam(trainable_parameters(model), lr=0.01)
noisy, clean = torch.rand(6, 8), torch.rand(6, 8)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = (model(noisy) - clean).abs().mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
