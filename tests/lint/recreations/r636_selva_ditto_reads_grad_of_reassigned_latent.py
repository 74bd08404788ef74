"""A commit message in ComfyUI-SelVA describes a silent failure of its DITTO
inference-time optimisation: "x was reassigned on every ODE step, so by the
time loss.backward() ran, x pointed to the final output tensor (grad_fn, not
a leaf) and x.grad was always None.  The manual gradient transfer never
fired: x0 was never updated.  The optimization was a no-op."  Re-created as
an Euler sampler over a small velocity network, an optimiser that marks the
latent as requiring grad, integrates, scores the sample and moves `x0` by
`x.grad` when it is set.  Nothing raises; `bug_shows()` checks that `x0`
never moves while the gradient of the loss with respect to it is not zero.
Buggy line: `if x.grad is not None:` (the `.grad` of the last ODE state, a
non-leaf, is never populated).
Source: https://gitea.ts-pc.fr/Ethanfel/ComfyUI-SelVA/commits/commit/2d06cb2f523d151c95b0f3dd031a949355e4e823/nodes/selva_ditto_optimizer.py"""
import torch
import torch.nn as nn


class VelocityNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(9, 32), nn.Tanh(), nn.Linear(32, 8))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.expand(x.shape[0], 1)], dim=1))


def sample(net, x, steps=4):
    dt = 1.0 / steps
    for i in range(steps):
        t = torch.full((1, 1), i * dt)
        x = x + dt * net(x, t)
    return x


class DittoOptimizer:
    def __init__(self, net, iters=3, lr=0.1):
        self.net = net.requires_grad_(False)
        self.iters = iters
        self.lr = lr

    def optimise(self, x0, target):
        x0 = x0.clone()
        for _ in range(self.iters):
            x = x0.clone().requires_grad_(True)
            x = sample(self.net, x)
            loss = (x - target).pow(2).mean()
            loss.backward()
            if x.grad is not None:  # missed: ADL020
                x0 -= self.lr * x.grad
        return x0


def bug_shows():
    torch.manual_seed(0)
    net = VelocityNet()
    x0 = torch.randn(2, 8)
    target = torch.randn(2, 8)
    out = DittoOptimizer(net).optimise(x0, target)
    leaf = x0.clone().requires_grad_(True)
    loss = (sample(net, leaf) - target).pow(2).mean()
    (g,) = torch.autograd.grad(loss, leaf)
    return torch.equal(out, x0) and g.abs().sum().item() > 0
