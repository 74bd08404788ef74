"""DeepFM-style click-through-rate model whose L2 regularization on the embedding tables is
built once, when the model is constructed (`self.reg_loss = self.reg_loss + ...`), and then
added to every batch's loss, with `total_loss.backward(retain_graph=True)` so that the second
batch does not complain about a freed graph. The regularization graph saved the embedding
weights, which `optimizer.step()` then updates in place, so the second batch's backward fails
with "one of the variables needed for gradient computation has been modified by an inplace
operation ... is at version 2; expected version 1".
Source: https://github.com/shenweichen/DeepCTR-Torch/issues/88 (the maintainers: "The problem is
caused by `self.reg_loss` part ... move the whole computation process of regularization into
network forward part", done in a later release that computes it at every step).
expect: raises"""
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
        self.reg_loss = torch.zeros(1)
        self.add_regularization_loss(self.embedding_dict.parameters(), l2_reg_embedding)

    def add_regularization_loss(self, weight_list, weight_decay):
        reg_loss = sum(torch.sum(w * w) for w in weight_list)
        self.reg_loss = self.reg_loss + weight_decay * reg_loss

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
    total_loss = loss + model.reg_loss
    total_loss.backward(retain_graph=True)
    optimizer.step()
    losses.append(total_loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
