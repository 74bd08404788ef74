# message: Trying to backward through the graph a second time
# code: AD302 (catalogue: backward_twice)
# set: 18
# trigger: a sequence classifier's embedded, padded batch is packed once with
#   nn.utils.rnn.pack_padded_sequence before the epoch loop (the data "does not change"); each epoch
#   runs the nn.LSTM on the packed batch and backpropagates, so the second epoch's backward() goes
#   through the embedding's graph that the first one freed
# source: none found; the pattern as users write it (preprocessing hoisted out of the loop)
# results: embedding, lstm, head
import os
import sys

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch.manual_seed(0)
embedding = nn.Embedding(10, 4)
lstm = nn.LSTM(4, 5, batch_first=True)
head = nn.Linear(5, 2)
tokens = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 0]])
lengths = torch.tensor([4, 2])
labels = torch.tensor([0, 1])
params = list(embedding.parameters()) + list(lstm.parameters()) + list(head.parameters())
optimizer = torch.optim.SGD(params, lr=0.1)
packed = pack_padded_sequence(embedding(tokens), lengths, batch_first=True)  # PRIMARY
for epoch in range(2):
    optimizer.zero_grad()
    _, (h, _) = lstm(packed)
    loss = nn.functional.cross_entropy(head(h[-1]), labels)
    loss.backward()
    optimizer.step()
