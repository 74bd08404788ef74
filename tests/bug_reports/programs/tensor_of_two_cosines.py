"""`torch.tensor([cos_a, cos_b])` copies the values out of the graph.
Source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261
(answer: use torch.stack([cos_a, cos_b]))."""
import torch

a = torch.tensor(0.5, requires_grad=True)
b = torch.tensor(1.5, requires_grad=True)
cos_a = torch.cos(a)
cos_b = torch.cos(b)
y2 = torch.tensor([cos_a, cos_b])  # PRIMARY
y2.sum().backward()
grads = [a.grad, b.grad]
