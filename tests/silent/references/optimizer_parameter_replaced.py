import torch
import torch.nn as nn

torch.manual_seed(0)
linear = nn.Linear(4, 3)
torch.ones(3)  # the first gain, made as in the program (draws nothing)
x, y = torch.randn(16, 4), torch.randn(16, 3)
with torch.no_grad():
    gain = (1.0 / linear(x).std(0)).clone()
weight, bias = linear.weight.detach().clone(), linear.bias.detach().clone()
for _ in range(3):  # plain SGD on the three tensors, by hand
    w, b, g = (t.clone().requires_grad_() for t in (weight, bias, gain))
    loss = ((x @ w.T + b) * g - y).pow(2).mean()
    gw, gb, gg = torch.autograd.grad(loss, [w, b, g])
    weight, bias, gain = weight - 0.1 * gw, bias - 0.1 * gb, gain - 0.1 * gg
result = [weight, bias, gain]
