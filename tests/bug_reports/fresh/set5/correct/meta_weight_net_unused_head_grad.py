"""Meta-Weight-Net (learning to reweight noisy labels): the pseudo-update differentiates the
weighted training loss with respect to all of the classifier's parameters with
`torch.autograd.grad(..., create_graph=True)`; the user's own classifier has an auxiliary head
that this loss does not use, so autograd refuses.
Source: https://github.com/ShiYunyi/Meta-Weight-Net_Code-Optimization/issues/5 ("One of the
differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is
the desired behavior", at `pseudo_grads = torch.autograd.grad(pseudo_loss,
pseudo_net.parameters(), create_graph=True)` with the user's own model).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(5, 8)
        self.head = nn.Linear(8, 3)
        self.aux_head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


torch.manual_seed(0)
net = Classifier()
meta_net = nn.Sequential(nn.Linear(1, 8), nn.ReLU(), nn.Linear(8, 1), nn.Sigmoid())
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
meta_optimizer = torch.optim.Adam(meta_net.parameters(), lr=1e-3)
x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
x_meta, y_meta = torch.randn(6, 5), torch.randint(0, 3, (6,))

meta_losses = []
for step in range(2):
    params = dict(net.named_parameters())
    cost = F.cross_entropy(functional_call(net, params, (x,)), y, reduction="none")
    weights = meta_net(cost.detach()[:, None]).squeeze(1)
    pseudo_loss = (weights * cost).mean()
    pseudo_grads = torch.autograd.grad(pseudo_loss, list(params.values()), create_graph=True, allow_unused=True)
    fast = {k: p if g is None else p - 0.1 * g for (k, p), g in zip(params.items(), pseudo_grads)}
    meta_loss = F.cross_entropy(functional_call(net, fast, (x_meta,)), y_meta)
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()
    meta_losses.append(meta_loss.detach())
    optimizer.zero_grad()
    with torch.no_grad():
        w = meta_net(F.cross_entropy(net(x), y, reduction="none")[:, None]).squeeze(1)
    (w * F.cross_entropy(net(x), y, reduction="none")).mean().backward()
    optimizer.step()
result = {"meta_losses": meta_losses, "params": [p.detach() for p in net.parameters()]}
