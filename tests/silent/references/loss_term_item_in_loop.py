import torch
import torch.nn as nn

torch.manual_seed(0)
linear = nn.Linear(3, 4)
states = torch.randn(5, 3)
returns = torch.linspace(1.0, 0.2, 5)
actions = torch.tensor([0, 3, 1, 1, 2])
w, b = linear.weight.detach().clone().requires_grad_(), linear.bias.detach().clone().requires_grad_()
log_probs = torch.log_softmax(states @ w.T + b, dim=1)
entropy = -(log_probs.exp() * log_probs).sum(1).mean()
chosen = log_probs[torch.arange(5), actions]
loss = (-0.01 * entropy - (chosen * returns).sum()) / 5
gw, gb = torch.autograd.grad(loss, [w, b])
result = [w.detach() - 0.1 * gw, b.detach() - 0.1 * gb]
