# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 15
# trigger: a language model ties its output projection to its input embedding (decoder.weight =
#   embedding.weight); the optimizer gives the embedding and the output layer their own learning
#   rates in two groups, so the tied weight is in both
# source: none found; the pattern as users write it (weight tying with per-module learning rates)
# results: model, losses
import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.embedding.weight

    def forward(self, tokens):
        out, _ = self.rnn(self.embedding(tokens))
        return self.decoder(out)


torch.manual_seed(0)
model = TinyLM(10, 6)
optimizer = torch.optim.SGD([
    {"params": list(model.embedding.parameters()) + list(model.rnn.parameters()), "lr": 0.1},
    {"params": model.decoder.parameters(), "lr": 0.01},  # PRIMARY
])
tokens = torch.randint(0, 10, (3, 5))
losses = []
for step in range(2):
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 10), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
