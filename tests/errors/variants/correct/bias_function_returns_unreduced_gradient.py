# message: Function ChannelBiasBackward returned an invalid gradient at index 1 - got [4, 3, 5] but expected shape compatible with [3]
# code: AD120 (catalogue: function_wrong_shape)
# set: 9
# trigger: a hand-written Function adds a per-channel bias of shape [3] to a [batch, channel,
#   length] signal (bias[:, None]); its backward returns the incoming gradient for the bias as it
#   is, not summed over batch and length
# source: none found; the pattern as users write it (custom Functions with broadcasting)
# results: losses, bias, weight
import torch
import torch.nn.functional as F


class ChannelBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        return x + bias[:, None]

    @staticmethod
    def backward(ctx, grad):
        return grad, grad.sum((0, 2))  # PRIMARY


torch.manual_seed(0)
weight = torch.randn(3, 2, 3, requires_grad=True)
bias = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.SGD([weight, bias], lr=0.1)
x, y = torch.randn(4, 2, 7), torch.randn(4, 3, 5)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(ChannelBias.apply(F.conv1d(x, weight), bias), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
