# message: Trying to backward through the graph a second time (or directly access saved tensors after they
#   have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the
#   graph a second time or if you need to access the saved intermediate values after calling
#   backward.
# code: AD302 (catalogue: backward_twice)
# set: 22
# trigger: an agent pushes the encoder's embedding of each observation (computed with gradients) into a
#   replay buffer class; later updates sample batches that include an embedding already
#   backpropagated through
# source: none found; the pattern as users write it
# results: encoder.weight, head.weight, losses
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class ReplayBuffer:
    def __init__(self):
        self.items = []

    def push(self, embedding, target):
        self.items.append((embedding, target))

    def sample(self, indices):
        embeddings, targets = zip(*(self.items[i] for i in indices))
        return torch.stack(embeddings), torch.stack(targets)


torch.manual_seed(0)
encoder = nn.Linear(4, 3)
head = nn.Linear(3, 1)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
buffer = ReplayBuffer()
observations = torch.randn(6, 4)
targets = torch.randn(6, 1)
for obs, target in zip(observations, targets):
    buffer.push(encoder(obs), target)  # PRIMARY
losses = []
for indices in ([0, 1, 2], [2, 3, 4], [4, 5, 0]):
    emb, y = buffer.sample(indices)
    loss = (head(emb) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
