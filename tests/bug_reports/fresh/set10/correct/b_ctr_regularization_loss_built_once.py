"""DeepFM regularization loss built once at construction and reused every batch.
Source: https://github.com/shenweichen/DeepCTR-Torch/issues/88 (compute it at every step)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
field_sizes, embed_dim = [10, 20, 15], 4


class DeepFM(nn.Module):
    def __init__(self, l2_reg_embedding=1e-3):
        super().__init__()
        self.embedding_dict = nn.ModuleList(nn.Embedding(n, embed_dim) for n in field_sizes)
        self.dnn = nn.Sequential(nn.Linear(len(field_sizes) * embed_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self.l2_reg_embedding = l2_reg_embedding

    def get_regularization_loss(self):
        reg_loss = sum(torch.sum(w * w) for w in self.embedding_dict.parameters())
        return torch.zeros(1) + self.l2_reg_embedding * reg_loss

    def forward(self, x):
        embeds = [emb(x[:, i]) for i, emb in enumerate(self.embedding_dict)]
        stacked = torch.stack(embeds, dim=1)  # batch, fields, dim
        fm = 0.5 * (stacked.sum(1) ** 2 - (stacked**2).sum(1)).sum(1, keepdim=True)
        return torch.sigmoid(fm + self.dnn(stacked.flatten(1)))


model = DeepFM()
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.05)
x = torch.stack([torch.randint(0, n, (64,)) for n in field_sizes], dim=1)
y = torch.randint(0, 2, (64, 1)).float()
losses = []
for batch in range(3):
    optimizer.zero_grad()
    loss = F.binary_cross_entropy(model(x), y)
    total_loss = loss + model.get_regularization_loss()
    total_loss.backward()
    optimizer.step()
    losses.append(total_loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
