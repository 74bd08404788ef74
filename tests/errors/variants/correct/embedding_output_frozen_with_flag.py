# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 5
# trigger: a text classifier "freezes" its pretrained embeddings inside forward by setting
#   requires_grad = False on the embedding lookup's result
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 2)

    def forward(self, tokens):
        embedded = self.embedding(tokens)
        embedded = embedded.detach()  # PRIMARY
        return self.head(embedded.mean(1))


torch.manual_seed(0)
model = BagClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, labels = torch.randint(0, 10, (4, 5)), torch.tensor([0, 1, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
