# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: grad_missing_create_graph)
# set: 31
# trigger: a Hamiltonian neural network learns a pendulum's energy; the vector field (dH/dp, -dH/dq)
#   is taken by torch.autograd.grad in a helper in another file without create_graph=True, and the
#   loss on the predicted time derivatives is backpropagated
# source: none found; the pattern as users write it (HNN training on observed derivatives)
# helpers: lib_hamiltonian31.py
# results: losses, energy
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_hamiltonian31 import vector_field  # noqa: E402

torch.manual_seed(0)
energy = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(energy.parameters(), lr=0.01)
q, p = torch.randn(32, 1), torch.randn(32, 1)
dq_dt, dp_dt = p.clone(), -torch.sin(q)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    predicted_dq, predicted_dp = vector_field(energy, q.clone(), p.clone())
    loss = (predicted_dq - dq_dt).pow(2).mean() + (predicted_dp - dp_dt).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
