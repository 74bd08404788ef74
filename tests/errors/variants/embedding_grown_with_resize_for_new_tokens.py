# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 10
# helpers: lib_vocabulary.py
# trigger: new tokens are added to a trained model's vocabulary by a helper in another file that
#   grows the embedding's weight with weight.resize_(...) (the parameter itself) and fills the new rows
# source: none found; the pattern as users write it (growing a vocabulary, as resize_token_embeddings does)
# results: losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_vocabulary import add_tokens  # noqa: E402


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(5, 3)
        self.head = nn.Linear(3, 2)

    def forward(self, tokens):
        return self.head(self.embedding(tokens))


torch.manual_seed(0)
model = Tagger()
add_tokens(model, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, tags = torch.tensor([0, 2, 5, 6, 1]), torch.tensor([0, 1, 1, 0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), tags)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
