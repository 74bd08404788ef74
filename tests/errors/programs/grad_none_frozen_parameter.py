import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(8, 1))
model[0].weight.requires_grad = False  # a frozen pretrained embedding
tokens = torch.tensor([[1, 2], [3, 4], [5, 6]])
target = torch.tensor([[0.5], [-1.0], [2.0]])
for step in range(3):
    model.zero_grad()
    loss = (model(tokens) - target).pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad  # PRIMARY
