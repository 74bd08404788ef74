# message: you can only change requires_grad flags of leaf variables. If you want to use a computed
#   variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 10
# trigger: a language model ties its output projection to the embedding through a transposed view
#   kept on self (embedding.weight.t()) and, so that the output loss does not train the embedding,
#   calls requires_grad_(False) on that view in __init__
# source: none found; the pattern as users write it (tied input/output embeddings)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TinyLanguageModel(nn.Module):
    def __init__(self, vocabulary, width):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, width)
        self.mix = nn.Linear(width, width)
        self.output_weight = self.embedding.weight.t()
        self.output_weight.requires_grad_(False)  # PRIMARY

    def forward(self, tokens):
        h = torch.tanh(self.mix(self.embedding(tokens)))
        return h @ self.output_weight


torch.manual_seed(0)
model = TinyLanguageModel(vocabulary=6, width=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, following = torch.tensor([0, 1, 2, 3, 4]), torch.tensor([1, 2, 3, 4, 5])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), following)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
