"""Gradient descent on a tensor that requires grad: `s_batch -= lr * s_batch.grad`.
Source: https://github.com/BaiTheBest/SparseLLM/issues/13 (the maintainer's answer,
`s_batch = s_batch - s_learning_rate * s_batch.grad`, makes s_batch a non-leaf: the next
line's `s_batch.grad.zero_()` then fails because .grad is None)."""
import torch

torch.manual_seed(0)
W = torch.randn(5, 4)
target = torch.randn(5, 6)
s = torch.randn(4, 6)
s_learning_rate = 0.01
for chunk in (slice(0, 3), slice(3, 6)):
    s_batch = s[:, chunk].clone().requires_grad_(True)
    for it in range(3):
        loss_s = (W @ s_batch - target[:, chunk]).pow(2).sum()
        loss_s.backward()
        s_batch -= s_learning_rate * s_batch.grad  # PRIMARY
        s_batch.grad.zero_()
    s[:, chunk] = s_batch.detach()
