# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference
#   mode in computation tracked by autograd. To work around this, you can make a clone to get a
#   normal tensor and use it in autograd, or use `torch.no_grad()` instead of
#   `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved_decorator)
# set: 10
# helpers: lib_collate.py
# trigger: the DataLoader's collate_fn, in another file, is decorated with @torch.inference_mode()
#   because it standardises the batch "without gradients"; every batch is an inference tensor, and
#   the first nn.Linear saves it for backward
# source: none found; the pattern as users write it (preprocessing in collate functions)
# results: losses, model
import os
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_collate import stack_and_standardise  # noqa: E402

torch.manual_seed(0)
pairs = [(torch.randn(3), torch.randn(1)) for _ in range(8)]
loader = DataLoader(pairs, batch_size=4, shuffle=False, collate_fn=stack_and_standardise)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for features, targets in loader:
    optimizer.zero_grad()
    loss = F.mse_loss(model(features), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
