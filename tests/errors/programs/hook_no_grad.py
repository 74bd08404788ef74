import torch

x = torch.randn(3)
y = x * 2
y.register_hook(lambda grad: grad * 2)  # PRIMARY
