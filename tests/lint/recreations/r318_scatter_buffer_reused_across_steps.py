"""A user tried to save allocations by reusing one buffer: a zero tensor
created once, into which each step scatters gathered embeddings
(`c[[1, 2]] = b[[1, 1]]`) before the loss.  Every scatter is recorded on the
buffer, so the buffer's graph grows across steps: the second step's backward
pass reaches the first step's scatter, whose saved indices the first
backward freed ("Trying to backward through the graph a second time"; in
2019 an internal assert).  The fix allocates the buffer inside the step (or
`detach_()`es it after each backward pass).
Buggy line: `slots[slot_index] = token_emb[token_index]` in `train`, on a
buffer made before the loop.
Expected finding: ADL019 at `loss.backward()` (or ADL017-like state carried
across iterations).
Source: https://github.com/pytorch/pytorch/issues/21469"""
import torch
import torch.nn as nn


class SlotReader(nn.Module):
    def __init__(self, vocab=10, dim=4, n_slots=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.readout = nn.Linear(n_slots * dim, 1)


def train(model, optimizer, batches, n_slots=3, dim=4):
    slots = torch.zeros(n_slots, dim)
    for tokens, slot_index, token_index, target in batches:
        token_emb = model.embedding(tokens)
        slots[slot_index] = token_emb[token_index]
        pred = model.readout(slots.view(1, -1))
        loss = (pred - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = SlotReader()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = (torch.tensor([3, 5, 7]), torch.tensor([1, 2]), torch.tensor([1, 1]), torch.ones(1, 1))
    train(model, optimizer, [batch, batch])
