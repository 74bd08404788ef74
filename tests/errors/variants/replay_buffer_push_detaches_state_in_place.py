# message: Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is not
#   supported, please use out-of-place `.detach()` instead
# code: AD139 (catalogue: detach_saved_inplace)
# set: 11
# helpers: lib_replay.py
# trigger: an agent pushes the encoder's output into a replay buffer (another file) before its own
#   loss's backward(); push() stores state.detach_(), which detaches the tensor the critic's
#   nn.Linear saved for backward
# source: none found; the pattern as users write it (replay buffers that "drop the graph" in place)
# results: losses, encoder, critic
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_replay import ReplayBuffer  # noqa: E402

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
critic = nn.Linear(4, 1)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(critic.parameters()), lr=0.1)
buffer = ReplayBuffer()
observations, returns = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    state = encoder(observations)
    value = critic(state)
    buffer.push(state)
    loss = (value - returns).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
