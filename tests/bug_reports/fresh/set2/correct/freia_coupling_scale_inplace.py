"""Affine coupling block (normalizing flow): the soft-clamped log-scale, a tanh output, is scaled
in place, `s *= clamp`, after tanh saved it.
Source: https://github.com/vislearn/FrEIA/pull/171 (fixed error caused by in-place operations).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
subnet = nn.Linear(2, 4)
x = torch.randn(5, 4)
clamp = 2.0

x1, x2 = x[:, :2], x[:, 2:]
params = subnet(x1)
s = torch.tanh(params[:, :2])
s = s * clamp
t = params[:, 2:]
y2 = x2 * s.exp() + t
log_jac = s.sum(1)
loss = (0.5 * torch.cat([x1, y2], 1).pow(2).sum(1) - log_jac).mean()
loss.backward()
result = {"loss": loss.detach(), "w": subnet.weight.grad, "b": subnet.bias.grad}
