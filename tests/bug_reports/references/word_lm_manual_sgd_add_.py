import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 10))
lr = 0.5
data = torch.tensor([1, 2, 3, 4])
targets = torch.tensor([2, 3, 4, 5])
for step in range(2):
    model.zero_grad()
    loss = nn.functional.cross_entropy(model(data), targets)
    loss.backward()
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
params = [p.detach().clone() for p in model.parameters()]
