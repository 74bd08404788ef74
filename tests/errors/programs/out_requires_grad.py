import torch

x = torch.randn(3, requires_grad=True)
result = torch.empty(3)
torch.mul(x, 2, out=result)  # PRIMARY
