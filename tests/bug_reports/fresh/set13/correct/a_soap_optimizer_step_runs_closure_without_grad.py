"""Training with a hand-written SOAP-style optimizer (Adam run in the eigenbasis of a Shampoo
preconditioner, here reduced to a diagonal second-moment preconditioner): like PyTorch's own
optimizers, its `step(self, closure=None)` is decorated with `@torch.no_grad()`, but it calls
`loss = closure()` directly inside it. The closure's forward pass then runs with gradients off, so
its `loss.backward()` raises "element 0 of tensors does not require grad and does not have a
grad_fn" when the training loop calls `optimizer.step(closure)`.
Source: https://github.com/nikhilvyas/SOAP/pull/21 ("Enable grad when using closure": "fixes missing
gradients if stepping with closure like `loss = optimizer.step(closure)`"; PyTorch's optimizers call
the closure under `torch.enable_grad()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN, HID, CLASSES, BATCH = 6, 16, 3, 16


class SOAP(torch.optim.Optimizer):
    def __init__(self, params, lr=3e-3, betas=(0.95, 0.95), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["precond"] = torch.zeros_like(p)
                state["step"] += 1
                state["exp_avg"].mul_(beta1).add_(p.grad, alpha=1 - beta1)
                state["precond"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (state["precond"] / (1 - beta2 ** state["step"])).sqrt().add_(group["eps"])
                p.addcdiv_(state["exp_avg"] / (1 - beta1 ** state["step"]), denom, value=-group["lr"])
        return loss


model = nn.Sequential(nn.Linear(IN, HID), nn.GELU(), nn.Linear(HID, CLASSES))
optimizer = SOAP(model.parameters())
x = torch.randn(BATCH, IN)
y = torch.randint(0, CLASSES, (BATCH,))
losses = []
for step in range(4):
    def closure():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    loss = optimizer.step(closure)
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
