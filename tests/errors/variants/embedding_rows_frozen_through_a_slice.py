# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 12
# trigger: to keep the special-token rows of an embedding fixed while the others train, the model's
#   __init__ calls requires_grad_(False) on a slice of the weight (self.embedding.weight[:2])
# source: none found; the pattern as users write it (freezing some rows of an embedding)
# results: losses, model
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(6, 3)
        self.embedding.weight[:2].requires_grad_(False)  # PRIMARY
        self.head = nn.Linear(3, 2)

    def forward(self, tokens):
        return self.head(self.embedding(tokens).mean(dim=1))


torch.manual_seed(0)
model = Tagger()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, labels = torch.tensor([[0, 2, 3], [1, 4, 5]]), torch.tensor([0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(tokens), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
