import torch

x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
result = torch.empty(3)
torch.mul(x, 2, out=result)  # PRIMARY
