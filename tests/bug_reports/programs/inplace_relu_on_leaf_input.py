"""`F.relu(x, inplace=True)` on the input, a leaf that requires grad.
Source: https://github.com/pytorch/pytorch/issues/727 (answer: an in-place op on a leaf that
requires grad is not allowed; use the out-of-place relu)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
x = torch.randn(4, 6, requires_grad=True)
h = F.relu(x, inplace=True)  # PRIMARY
h.sum().backward()
grads = [x.grad]
