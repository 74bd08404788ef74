"""A detach() shares storage and version counter with its source: writing into it changes the
output exp() saved.
Source: https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/
(answer: use `tensor.detach().clone()` for a copy you can modify)."""
import torch

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.exp()
c = b.detach()  # PRIMARY
c[0] = 0.0  # WRITE
b.sum().backward()
grads = [a.grad]
values = [c]
