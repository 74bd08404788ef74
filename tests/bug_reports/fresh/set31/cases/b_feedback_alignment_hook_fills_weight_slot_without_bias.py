"""Feedback-alignment layers: `LinearFA` keeps a fixed random feedback matrix `weight_fa` and
registers a module backward hook (`register_backward_hook`) that replaces the gradient sent to the
layer's input by `grad_output[0].mm(module.weight_fa)`. The hook assumes the `grad_input` layout of
`addmm` (bias, input, weight) and returns `(grad_input[0], grad_input_fa) + grad_input[2:]`. The
reporter built the layers with `bias=False`: the last op is then `mm(input, weight.t())`, whose
`grad_input` is (input, weight), so the feedback gradient lands in the weight's slot and backward
fails with "hook 'linear_fa_backward_hook' has changed the size of value". The maintainer's fix
picks the input's slot from whether the layer has a bias.
Source: https://github.com/jordan-g/PyTorch-Feedback-Alignment-Layers/issues/1
expect: raises"""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

warnings.simplefilter("ignore")
torch.manual_seed(0)


def linear_fa_backward_hook(module, grad_input, grad_output):
    if grad_input[1] is not None:
        grad_input_fa = grad_output[0].mm(module.weight_fa)
        return (grad_input[0], grad_input_fa) + grad_input[2:]


class LinearFA(nn.Linear):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__(in_features, out_features, bias)
        self.register_buffer("weight_fa", torch.randn(out_features, in_features) * 0.1)
        self.register_backward_hook(linear_fa_backward_hook)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = LinearFA(10, 32, bias=False)
        self.fc2 = LinearFA(32, 16, bias=False)
        self.fc3 = LinearFA(16, 1, bias=False)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
data = torch.randn(64, 10)
target = data[:, :3].sum(1, keepdim=True)

losses = []
for epoch in range(5):
    for i in range(0, 64, 16):
        x, y = data[i:i + 16], target[i:i + 16]
        optimizer.zero_grad()
        loss = F.mse_loss(net(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]}
