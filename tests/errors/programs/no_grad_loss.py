import torch

w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
with torch.no_grad():
    loss = (w * w).sum()  # PRIMARY
loss.backward()
