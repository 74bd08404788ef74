# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference
#   mode in computation tracked by autograd. To work around this, you can make a clone to get a
#   normal tensor and use it in autograd, or use `torch.no_grad()` instead of
#   `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 22
# helpers: lib_padding_collate.py
# trigger: a collate function in a library module is decorated with @torch.inference_mode() and pads the
#   variable-length feature sequences with nn.utils.rnn.pad_sequence; the padded batch goes into a
#   trained nn.Linear, which saves it
# source: none found; the pattern as users write it
# results: model, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_padding_collate import collate


torch.manual_seed(0)
sequences = [torch.randn(n, 4) for n in (3, 5, 2, 4)]
targets = torch.randn(4)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for epoch in range(3):
    batch, mask = collate(sequences)
    scores = model(batch).squeeze(-1)
    pooled = (scores * mask).sum(1) / mask.sum(1)
    loss = (pooled - targets).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
