import torch

a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
b = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
with torch.autograd.detect_anomaly():
    distance = ((a - b) ** 2).sum(1).sqrt()  # PRIMARY
    distance.sum().backward()  # RAISES
