"""A classifier head on an encoder's features, both in one optimizer: the features are detached
on the way to the head (left over from a linear-probe experiment), so the loss trains the head
and the class-weight vector only, and the encoder never moves although the optimizer holds it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh())
head = nn.Linear(8, 3)
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
for _ in range(3):
    optimizer.zero_grad()
    features = encoder(x).detach()  # PRIMARY
    loss = F.cross_entropy(head(features), y)
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*encoder.parameters(), *head.parameters()]]
