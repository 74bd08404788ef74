import torch

torch.manual_seed(0)


def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


weights = init_params((6, 1))
bias = init_params(1)
xb = torch.randn(4, 6)
weights[0].data *= 1.0001
preds = xb @ weights + bias
loss = preds.sigmoid().mean()
loss.backward()
grads = [weights.grad, bias.grad]
