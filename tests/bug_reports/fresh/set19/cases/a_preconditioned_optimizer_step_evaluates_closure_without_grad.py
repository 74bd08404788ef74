"""A preconditioned optimizer (HomebrewML/HeavyBall, PrecondSchedulePaLMForeachSOAP) driven through
the closure interface, as Lightning and L-BFGS-style loops do: `step` is decorated with
`@torch.no_grad()` and calls `closure()` directly, so the forward pass inside the closure records
no graph and its `loss.backward()` fails with "element 0 of tensors does not require grad and does
not have a grad_fn".
Source: https://github.com/HomebrewML/HeavyBall/issues/10 ("closure support issue"; fixed in
0.15.0 by evaluating the closure under `torch.enable_grad()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DiagonalPreconditionedSGD(torch.optim.Optimizer):
    """Momentum SGD scaled by a running second moment (a small stand-in for the SOAP family)."""

    def __init__(self, params, lr=1e-2, beta=0.9, beta2=0.99, eps=1e-8):
        super().__init__(params, dict(lr=lr, beta=beta, beta2=beta2, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        if closure is None:
            loss = None
        else:
            loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["momentum"] = torch.zeros_like(p)
                    state["second"] = torch.zeros_like(p)
                state["second"].mul_(group["beta2"]).addcmul_(p.grad, p.grad, value=1 - group["beta2"])
                state["momentum"].mul_(group["beta"]).add_(p.grad / (state["second"].sqrt() + group["eps"]))
                p.add_(state["momentum"], alpha=-group["lr"])
        return loss


model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
optimizer = DiagonalPreconditionedSGD(model.parameters())
images = torch.randn(5, 1, 8, 8)
labels = torch.randint(0, 3, (5,))


def closure():
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    return loss


losses = [optimizer.step(closure).detach() for step in range(3)]

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
