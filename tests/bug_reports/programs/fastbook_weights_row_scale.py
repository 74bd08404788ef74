"""fastbook's MNIST basics: `weights[0] *= 1.0001` on the parameters made with requires_grad_().
Source: https://github.com/fastai/fastbook/pull/471 ("a view of a leaf Variable that requires
grad is being used in an in-place operation"; fixed as `weights[0].data *= 1.0001`)."""
import torch

torch.manual_seed(0)


def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


weights = init_params((6, 1))
bias = init_params(1)
xb = torch.randn(4, 6)
weights[0] *= 1.0001  # PRIMARY
preds = xb @ weights + bias
loss = preds.sigmoid().mean()
loss.backward()
grads = [weights.grad, bias.grad]
