# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: grad_missing_create_graph)
# set: 28
# trigger: dataset condensation by gradient matching: a helper in another file compares the network's
#   gradients on a learned synthetic batch with those on a real batch, both taken with
#   torch.autograd.grad; the synthetic one is taken without create_graph=True, so the matching distance
#   has no history back to the synthetic images and its backward() refuses
# source: none found; the method of "Dataset Condensation with Gradient Matching" (ICLR 2021) as users
#   write it
# helpers: lib_condense28.py
# results: distances, synthetic
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_condense28 import gradient_match  # noqa: E402

torch.manual_seed(0)
real, real_labels = torch.randn(32, 4), torch.randint(0, 2, (32,))
synthetic = torch.randn(4, 4, requires_grad=True)
synthetic_labels = torch.tensor([0, 0, 1, 1])
image_optimizer = torch.optim.SGD([synthetic], lr=0.5)
distances = []
for _ in range(3):
    network = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    image_optimizer.zero_grad()
    distance = gradient_match(network, real, real_labels, synthetic, synthetic_labels)
    distance.backward()
    image_optimizer.step()
    distances.append(distance.item())
