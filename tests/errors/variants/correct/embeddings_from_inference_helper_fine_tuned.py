import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_vocab import load_embeddings  # noqa: E402

torch.manual_seed(0)
embeddings = load_embeddings(10, 4)
embeddings = embeddings.clone().requires_grad_(True)  # PRIMARY
classifier = nn.Linear(4, 2)
optimizer = torch.optim.SGD([embeddings, *classifier.parameters()], lr=0.1)
tokens, labels = torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    sentence = F.embedding(tokens, embeddings).mean(1)
    loss = F.cross_entropy(classifier(sentence), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
