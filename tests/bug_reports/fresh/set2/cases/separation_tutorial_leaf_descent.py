"""Source-separation tutorial, gradient descent by hand: `mask -= lr * mask.grad` on a leaf that
requires grad, outside `no_grad`.
Source: https://github.com/source-separation/tutorial/issues/18 (fix: update under
`torch.no_grad()`).
expect: raises"""
import torch

torch.manual_seed(0)
mixture = torch.rand(6, 4)
source = torch.rand(6, 4) * mixture
mask = torch.full((6, 4), 0.5, requires_grad=True)
lr = 0.5
for step in range(3):
    loss = (mask * mixture - source).pow(2).mean()
    loss.backward()
    mask -= lr * mask.grad
    mask.grad.zero_()
result = {"loss": loss.detach(), "mask": mask.detach()}
