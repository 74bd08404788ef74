# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 30
# trigger: an epoch-start callback of a Trainer-like loop shuffles the replay buffer's rows without a
#   copy, torch.index_select(buffer, 0, permutation, out=buffer); the output is the input
# source: none found; the pattern as users write it (a buffer shuffled "in place" to save memory)
# results: losses, model
import torch
from torch import nn


class ReplayBuffer:
    def __init__(self, states, returns):
        self.states = states
        self.returns = returns

    def batches(self, size):
        for start in range(0, len(self.states), size):
            yield self.states[start:start + size], self.returns[start:start + size]


class ShuffleCallback:
    def __init__(self, seed):
        self.generator = torch.Generator().manual_seed(seed)

    def on_epoch_start(self, buffer):
        permutation = torch.randperm(len(buffer.states), generator=self.generator)
        torch.index_select(buffer.states, 0, permutation, out=buffer.states)  # PRIMARY
        torch.index_select(buffer.returns, 0, permutation, out=buffer.returns)


def fit(model, buffer, callback, epochs=2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(epochs):
        callback.on_epoch_start(buffer)
        for states, returns in buffer.batches(4):
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(states).squeeze(-1), returns)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
    return losses


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
buffer = ReplayBuffer(torch.randn(8, 3), torch.randn(8))
losses = fit(model, buffer, ShuffleCallback(seed=1))
