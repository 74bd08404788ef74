# message: unsupported operation: more than one element of the written-to tensor refers to a single memory location.
# code: AD124 (catalogue: expand_inplace)
# trigger: a causal attention mask made with expand() over the batch, then filled in place with
#   += inside a helper called by the attention module
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


def causal_mask(batch, steps):
    mask = torch.zeros(batch, steps, steps)  # PRIMARY
    mask += torch.full((steps, steps), float("-inf")).triu(1)
    return mask


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.k = nn.Linear(4, 4)

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(1, 2) + causal_mask(x.shape[0], x.shape[1])
        return scores.softmax(-1) @ x


torch.manual_seed(0)
model = Attention()
loss = model(torch.randn(2, 3, 4)).pow(2).mean()
loss.backward()
