# message: Inference tensors do not track version counter.
# code: AD146 (catalogue: inference_tensor_version)
# set: 26
# trigger: a memory-saving training loop runs under torch.autograd.graph.allow_mutation_on_saved_tensors(),
#   which reads the version counter of every tensor an in-place operation writes; the loop standardises
#   each batch in place (inputs.sub_(...).div_(...)), and the batches come from a loader in another file
#   decorated with @torch.inference_mode()
# source: none found; the pattern as users write it (in-place input normalisation in a loop that
#   allows mutation of saved tensors)
# helpers: lib_loader26.py
# results: model, losses
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_loader26 import load_batches  # noqa: E402

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
with torch.autograd.graph.allow_mutation_on_saved_tensors():
    for inputs, targets in load_batches(3, 16):
        inputs.sub_(inputs.mean(0)).div_(inputs.std(0))
        loss = F.mse_loss(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
