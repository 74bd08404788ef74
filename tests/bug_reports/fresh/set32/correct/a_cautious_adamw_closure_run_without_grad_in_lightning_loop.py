"""C-Optim's cautious AdamW (`c_adamw.AdamW`) used as a drop-in for `torch.optim.AdamW` in a
PyTorch Lightning 1.9 model: Lightning's automatic optimisation calls
`optimizer.step(closure=closure)` and the closure runs `training_step`, `zero_grad` and
`backward`. The cautious optimizer's `step` is decorated with `@torch.no_grad()` and calls
`loss = closure()` directly, so `training_step` runs with gradients off and the first backward
fails with "element 0 of tensors does not require grad and does not have a grad_fn"; with
`torch.optim.AdamW` the same model trains. torch's optimizers run the closure under
`torch.enable_grad()`, and that is the fix in the optimizer's `step` (Lightning's workaround for
the same failure with other optimizers: `torch.set_grad_enabled(True)` in `training_step`).
Source: https://github.com/kyleliang919/C-Optim/issues/1
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class AdamW(torch.optim.Optimizer):
    """Cautious AdamW: only the update components that agree in sign with the gradient are applied."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                beta1, beta2 = group["betas"]
                state["step"] += 1
                state["exp_avg"].mul_(beta1).add_(p.grad, alpha=1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                step_size = group["lr"] * math.sqrt(1 - beta2 ** state["step"]) / (1 - beta1 ** state["step"])
                update = state["exp_avg"] / (state["exp_avg_sq"].sqrt() + group["eps"])
                mask = (update * p.grad > 0).to(p.grad.dtype)
                mask = mask * (mask.numel() / (mask.sum() + 1))
                p.add_(update * mask, alpha=-step_size)
                if group["weight_decay"] > 0.0:
                    p.add_(p, alpha=-group["lr"] * group["weight_decay"])
        return loss


class RegressionModule(nn.Module):
    """The LightningModule of the report, reduced to what the loop calls."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
        self.loss_fn = nn.MSELoss()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return self.loss_fn(self.net(x), y)

    def configure_optimizers(self):
        return AdamW(self.parameters(), lr=1e-2)


def fit(module, batches):
    """Lightning's automatic optimisation: the step runs a closure that does forward and backward."""
    optimizer = module.configure_optimizers()
    losses = []
    for batch_idx, batch in enumerate(batches):
        def closure():
            loss = module.training_step(batch, batch_idx)
            optimizer.zero_grad()
            loss.backward()
            losses.append(loss.detach())
            return loss
        optimizer.step(closure=closure)
    return losses


module = RegressionModule()
batches = [(torch.randn(16, 8), torch.randn(16, 1)) for _ in range(4)]
losses = fit(module, batches)
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in module.parameters()]}
