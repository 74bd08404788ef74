"""A near twin of r701's cause: the label prototypes are encoded once in `__init__` by a
method of the module, under `torch.no_grad()` (a frozen snapshot, as prototype classifiers
mean it): no graph is kept, every backward goes through the forward's own graph only.
Correct: must stay silent."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PrototypeTagger(nn.Module):
    def __init__(self, label_tokens, vocab=20, hidden=8):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, hidden)
        self.label_encoder = nn.Linear(hidden, hidden)
        self.label_tokens = label_tokens
        with torch.no_grad():
            self.prototypes = self.encode_labels()

    def encode_labels(self):
        pooled = self.token_embedding(self.label_tokens).mean(1)
        return torch.tanh(self.label_encoder(pooled))

    def forward(self, tokens):
        return self.token_embedding(tokens) @ self.prototypes.t()


def run():
    torch.manual_seed(0)
    model = PrototypeTagger(torch.randint(0, 20, (3, 4)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(3):
        tokens, tags = torch.randint(0, 20, (2, 5)), torch.randint(0, 3, (2, 5))
        loss = F.cross_entropy(model(tokens).reshape(-1, 3), tags.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model
