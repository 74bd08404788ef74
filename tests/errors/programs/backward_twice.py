import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
h = torch.tanh(x)
loss1 = h.sum()
loss2 = (h * 2).sum()
loss1.backward()  # PRIMARY
loss2.backward()
