"""Training with an optimizer from a third-party package (Hugging Face's AdamW) whose `step(closure)`
is decorated with `@torch.no_grad()` and calls the closure inside it: the training step that the
closure runs computes its loss with gradients off, and its `backward()` fails (PyTorch's own
optimizers call the closure under `torch.enable_grad()`).
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/18254 ("element 0 of tensors does
not require grad and does not have a grad_fn" when using AdamW from Hugging Face; the proposed fix,
pull request #18268, runs the closure under `torch.enable_grad`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ThirdPartyAdam(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-2):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad.sign(), alpha=-group["lr"])
        return loss


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = ThirdPartyAdam(model.parameters())
x, y = torch.randn(16, 4), torch.randn(16, 1)


def training_step():
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    return loss


losses = [optimizer.step(training_step).detach() for _ in range(4)]
result = {"losses": losses, "params": [p.detach() for p in model.parameters()]}
