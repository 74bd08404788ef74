# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 15
# trigger: a collate-like helper pads each embedded sequence (nn.Embedding output) to the longest
#   length by growing it with resize_ and zeroing the new rows, before nn.utils.rnn-free batching
# source: none found; the pattern as users write it (NumPy's resize habit for padding)
# results: model.embedding.weight.grad, model.head.weight.grad, scores
import torch
from torch import nn


def pad_to(seq, length):
    old = seq.shape[0]
    seq = torch.cat([seq, seq.new_zeros(length - old, seq.shape[1])])  # PRIMARY
    return seq


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(12, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, sequences):
        embedded = [self.embedding(s) for s in sequences]
        longest = max(e.shape[0] for e in embedded)
        batch = torch.stack([pad_to(e, longest) for e in embedded])
        return self.head(batch).sum(dim=(1, 2))


torch.manual_seed(0)
model = Scorer()
scores = model([torch.tensor([1, 2, 3]), torch.tensor([4, 5]), torch.tensor([6])])
scores.sum().backward()
