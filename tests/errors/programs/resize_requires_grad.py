import torch

x = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
h = x * 2
h.resize_(2, 3)  # PRIMARY
loss = (h * torch.tensor([[1.0], [2.0]])).sum()
loss.backward()
