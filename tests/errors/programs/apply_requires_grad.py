import torch

w = torch.tensor([0.25, -1.5, 2.0], requires_grad=True)
w.apply_(lambda v: max(v, 0.0))  # PRIMARY
loss = (w * torch.tensor([1.0, 2.0, 3.0])).sum()
loss.backward()
