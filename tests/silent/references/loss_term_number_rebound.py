import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(6, 4)
decoder = nn.Linear(2, 6)
data = torch.randn(10, 6)
noise = torch.randn(3, 10, 2)
params = [p.detach().clone() for p in [*encoder.parameters(), *decoder.parameters()]]
kl_log = []
for step in range(3):  # SGD by hand, the KL term a tensor in the loss and a number in the log
    leaves = [p.clone().requires_grad_() for p in params]
    we, be, wd, bd = leaves
    mean, log_var = (data @ we.T + be).chunk(2, dim=1)
    z = mean + (0.5 * log_var).exp() * noise[step]
    reconstruction = ((z @ wd.T + bd - data) ** 2).mean()
    kl = -0.5 * (1 + log_var - mean.pow(2) - log_var.exp()).sum(1).mean()
    grads = torch.autograd.grad(reconstruction + 0.1 * kl, leaves)
    params = [p - 0.1 * g for p, g in zip(params, grads)]
    kl_log.append(kl.item())
result = params + [torch.tensor(kl_log)]
