"""A tutorial's parameters tensor, created with `requires_grad=True` so that autograd records
what is computed from it, then converted to a NumPy array with `a.numpy()` to print it: "Can't
call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead." The change, from
the page: `a.detach().numpy()`, the same values without the graph.
Source: https://androidkt.com/fix-cant-call-numpy-on-tensor-that-requires-grad-use-tensor-detach-numpy-instead/
expect: raises"""
import torch
import torch.nn as nn

a = torch.tensor([1, 2, 3.], requires_grad=True)

array = a.detach().numpy()
print(array)

result = {"array": torch.from_numpy(array.copy()), "a": a.detach()}
