# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 11
# helpers: lib_glove.py
# trigger: pretrained word vectors come from a loader in another file decorated with
#   @torch.inference_mode(); the model builds its embedding with
#   nn.Embedding.from_pretrained(table, freeze=False), which wraps the inference tensor in a
#   Parameter that requires grad
# source: none found; the pattern as users write it (from_pretrained with freeze=False to fine-tune
#   loaded vectors)
# results: losses, model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_glove import load_table  # noqa: E402


class BagOfWords(nn.Module):
    def __init__(self, table):
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(table, freeze=False)
        self.head = nn.Linear(table.shape[1], 1)

    def forward(self, tokens):
        return self.head(self.embedding(tokens).mean(dim=1))


torch.manual_seed(0)
model = BagOfWords(load_table(10, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
tokens, y = torch.randint(0, 10, (3, 5)), torch.randn(3, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(tokens) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
