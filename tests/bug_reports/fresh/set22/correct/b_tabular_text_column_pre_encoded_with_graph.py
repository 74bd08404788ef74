"""The same tabular model with the text embedder returning detached embeddings
(`self.embedding(idx).detach()`): the stored text features are data, not part of the graph.
Source: https://github.com/pyg-team/pytorch-frame/pull/229."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class HashTextEmbedder:
    def __init__(self, out_channels, num_hash_bins=16):
        self.num_hash_bins = num_hash_bins
        self.embedding = nn.Embedding(num_hash_bins, out_channels)

    def __call__(self, sentences):
        idx = torch.tensor([sum(map(ord, s)) % self.num_hash_bins for s in sentences])
        return self.embedding(idx).detach()


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
