"""Bag-of-embeddings text classifier trained with Adam: the reporter checked that the embedding of
an infrequent word stays put in batches where the word does not occur (its gradient rows are
zero there), and found it still changes after every step once it has been seen, because dense
Adam keeps applying the word's running moments. Nothing is raised; rare words drift on other
words' batches.
Source: https://github.com/pytorch/pytorch/issues/18404 ("Embedding changes even though gradient is
zero when using Adam"; the answer: build the Embedding with `sparse=True` and give it
`torch.optim.SparseAdam`, which only updates the rows that appear in the gradient).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, CLASSES = 12, 6, 2


class BagClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, DIM)
        self.out = nn.Linear(DIM, CLASSES)

    def forward(self, tokens):
        return self.out(self.embedding(tokens).mean(dim=1))


model = BagClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
optimizers = [optimizer]

# word 11 ("better") only occurs in the first batch
batches = [
    (torch.tensor([[1, 11, 3], [4, 5, 6]]), torch.tensor([1, 0])),
    (torch.tensor([[1, 2, 3], [7, 8, 9]]), torch.tensor([0, 1])),
    (torch.tensor([[2, 4, 6], [3, 5, 7]]), torch.tensor([1, 1])),
    (torch.tensor([[8, 9, 10], [1, 2, 3]]), torch.tensor([0, 0])),
]

losses = []
for tokens, labels in batches:
    for opt in optimizers:
        opt.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    for opt in optimizers:
        opt.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
