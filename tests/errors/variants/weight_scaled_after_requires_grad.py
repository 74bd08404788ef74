# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 3
# trigger: hand-written linear regression: the weights are made with requires_grad=True and
#   scaled by 0.01 on the same line, so `w` is the result of a multiplication, not a leaf, and
#   w.grad stays None for the manual update
# source: none found; the pattern as users write it (a frequent forum question)
# results: losses, w
import torch

torch.manual_seed(0)
x = torch.randn(16, 3)
y = x @ torch.tensor([[1.0], [-2.0], [0.5]])
w = torch.randn(3, 1, requires_grad=True) * 0.01  # PRIMARY
b = torch.zeros(1, requires_grad=True)
lr = 0.1
losses = []
for _ in range(3):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    w.data -= lr * w.grad
    b.data -= lr * b.grad
    w.grad.zero_()
    b.grad.zero_()
    losses.append(loss.item())
