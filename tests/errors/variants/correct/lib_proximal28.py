"""A proximal-gradient optimizer: a gradient step, then soft-thresholding (L1 shrinkage)."""
import torch


def soft_threshold(value, threshold):
    if value > threshold:
        return value - threshold
    if value < -threshold:
        return value + threshold
    return 0.0


class ProximalSGD(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, l1=0.01):
        super().__init__(params, dict(lr=lr, l1=l1))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            threshold = group["lr"] * group["l1"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.add_(p.grad, alpha=-group["lr"])
                p.copy_(torch.sign(p) * (p.abs() - threshold).clamp(min=0))  # PRIMARY
