"""Training a tabular model (a table for a relational recommendation task) whose text column is
encoded once, when the dataset is materialised, by a light hash-based text embedder built on an
`nn.Embedding`. The embedder returns `self.embedding(idx)` with its graph, so the stored text
features hang on one lookup node; the first training step's backward() frees it and the second
step raises "Trying to backward through the graph a second time".
Source: https://github.com/pyg-team/pytorch-frame/pull/229 ("Add `detach()` to
`HashTextEmbedder`": otherwise training gives the 'backward through the graph a second time'
error in the second iteration; the embedder is pre-encoding, not part of the network).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class HashTextEmbedder:
    def __init__(self, out_channels, num_hash_bins=16):
        self.num_hash_bins = num_hash_bins
        self.embedding = nn.Embedding(num_hash_bins, out_channels)

    def __call__(self, sentences):
        idx = torch.tensor([sum(map(ord, s)) % self.num_hash_bins for s in sentences])
        return self.embedding(idx)


words = ["red", "blue", "green", "cheap", "sturdy", "light", "wooden", "metal"]
titles = [f"{words[i % 8]} {words[(3 * i + 1) % 8]} chair" for i in range(32)]
numeric = torch.randn(32, 3)
target = torch.randn(32, 1)

embedder = HashTextEmbedder(out_channels=4)
text_features = embedder(titles)

model = nn.Sequential(nn.Linear(3 + 4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(2):
    for batch in torch.arange(32).split(8):
        optimizer.zero_grad()
        x = torch.cat([numeric[batch], text_features[batch]], dim=1)
        loss = nn.functional.mse_loss(model(x), target[batch])
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "weight": model[0].weight.detach().clone()}
