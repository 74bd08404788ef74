"""An issue on a Levenberg-Marquardt trainer for PyTorch: a physics-informed
network whose `forward` computes `u_t = torch.autograd.grad(u, t,
grad_outputs=torch.ones_like(u), create_graph=True)[0]` fails inside
`autograd.grad` with "element 0 of tensors does not require grad and does not
have a grad_fn" once it is trained by the library's loop.  A
Levenberg-Marquardt step evaluates the loss of each candidate update to
accept or reject it, and such evaluations run without autograd.  Re-created
as an ODE residual network (`u' = -u`, collocation times `t` with
`requires_grad=True`) and a small damped trainer whose `evaluate` runs the
model under `torch.no_grad()`.  Raises at the first candidate evaluation.
Buggy line: `loss = self.loss_fn(self.model(t))` inside `with
torch.no_grad():` (the model's forward needs autograd for its derivative).
Source: https://github.com/fabiodimarco/torch-levenberg-marquardt/issues/7"""
import torch
import torch.nn as nn


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, t):
        u = self.model(t)
        u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        return torch.cat([u, u_t], dim=1)


def residual_loss(out):
    u, u_t = out[:, :1], out[:, 1:]
    return ((u_t + u) ** 2).mean() + (u[0] - 1.0).pow(2).sum()


class DampedTrainer:
    def __init__(self, model, loss_fn, lr=1e-2):
        self.model = model
        self.loss_fn = loss_fn
        self.lr = lr

    def evaluate(self, t):
        with torch.no_grad():
            loss = self.loss_fn(self.model(t))  # missed: no rule (forward that differentiates run under no_grad)
        return loss.item()

    def step(self, t):
        loss = self.loss_fn(self.model(t))
        grads = torch.autograd.grad(loss, list(self.model.parameters()))
        backup = [p.detach().clone() for p in self.model.parameters()]
        with torch.no_grad():
            for p, g in zip(self.model.parameters(), grads):
                p -= self.lr * g
        if self.evaluate(t) > loss.item():
            with torch.no_grad():
                for p, b in zip(self.model.parameters(), backup):
                    p.copy_(b)
            self.lr *= 0.5


def run():
    torch.manual_seed(0)
    t = torch.linspace(0, 1, 20).unsqueeze(1).requires_grad_(True)
    trainer = DampedTrainer(PINN(), residual_loss)
    for _ in range(2):
        trainer.step(t)
