import torch
import torch.nn as nn

torch.manual_seed(0)
g_linear = nn.Linear(4, 4)
d_linear = nn.Linear(4, 1)
x, target = torch.randn(6, 4), torch.randn(6, 4)
weight, bias = g_linear.weight.detach().clone(), g_linear.bias.detach().clone()
dw, db = d_linear.weight.detach(), d_linear.bias.detach()
for _ in range(2):  # SGD on the generator, by hand, with both terms training it
    w, b = weight.clone().requires_grad_(), bias.clone().requires_grad_()
    fake = torch.tanh(x @ w.T + b)
    score = torch.sigmoid(fake @ dw.T + db)
    loss = -torch.log(score).mean() + 10.0 * (fake - target).abs().mean()
    gw, gb = torch.autograd.grad(loss, [w, b])
    weight, bias = weight - 0.1 * gw, bias - 0.1 * gb
result = [weight, bias]
