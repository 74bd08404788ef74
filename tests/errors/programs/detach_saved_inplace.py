import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
h = x.exp()
loss = (h * x).sum()
h.detach_()  # PRIMARY
loss.backward()
