import torch
import torch.nn.functional as F

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
weigher = torch.nn.Linear(3, 1)
x = torch.randn(4, 3)
target = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
weights = torch.sigmoid(weigher(x))
loss = F.binary_cross_entropy(torch.sigmoid(model(x)), target, weight=weights)  # PRIMARY
loss.backward()
