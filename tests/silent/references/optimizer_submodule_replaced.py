import torch
import torch.nn as nn

torch.manual_seed(0)
body, old_head = nn.Linear(6, 5), nn.Linear(5, 10)
head = nn.Linear(5, 3)
x, labels = torch.randn(12, 6), torch.randint(0, 3, (12,))
model = nn.Sequential(body, nn.ReLU(), head)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)  # holds the body and the new head
for _ in range(3):
    loss = nn.functional.cross_entropy(model(x), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
