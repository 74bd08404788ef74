"""A physics-informed network for the 2-D Poisson problem, trained with a self-adaptive loss
weighting: each epoch, the weight of each condition (PDE residual, boundary) is computed from the
norm of that condition's gradient, obtained with `loss.backward(retain_graph=True)` and reading
`p.grad` of every parameter of the model. The user's network starts with a frozen random
Fourier-feature layer (`requires_grad_(False)`, a usual PINN input embedding): its parameters
never get a `.grad`, and the weighting crashes on the first epoch with "'NoneType' object has no
attribute 'flatten'". The change (the library's fix): the gradients of each condition come from
`torch.autograd.grad` over the parameters that require grad, with `allow_unused=True`, and the
unused ones are skipped.
Source: https://github.com/PINA-org/PINA/issues/741
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class WeightingInterface:
    """Loss weighting schema: `aggregate` refreshes the weights every `update_every_n_epochs`
    epochs with `weights_update` and sums the weighted condition losses."""

    def __init__(self, update_every_n_epochs=1):
        self.update_every_n_epochs = update_every_n_epochs
        self.solver = None
        self._saved_weights = {}

    def weights_update(self, losses):
        raise NotImplementedError

    def aggregate(self, losses):
        if self.solver.trainer.current_epoch % self.update_every_n_epochs == 0:
            self._saved_weights = self.weights_update(losses)
        return sum(self._saved_weights[condition] * loss for condition, loss in losses.items())

    def last_saved_weights(self):
        return self._saved_weights


class SelfAdaptiveWeighting(WeightingInterface):
    """Equalises the gradient norms of the condition losses."""

    def weights_update(self, losses):
        # Define a dictionary to store the norms of the gradients
        losses_norm = {}

        # Compute the gradient norms for each loss component
        for condition, loss in losses.items():
            loss.backward(retain_graph=True)
            grads = torch.cat(
                [p.grad.flatten() for p in self.solver.model.parameters()]
            )
            losses_norm[condition] = grads.norm()

        # Update the weights
        return {
            condition: sum(losses_norm.values()) / losses_norm[condition]
            for condition in losses
        }


def laplacian(u, x):
    grad_u = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    u_xx = torch.autograd.grad(grad_u[:, 0:1], x, torch.ones_like(u), create_graph=True)[0][:, 0:1]
    u_yy = torch.autograd.grad(grad_u[:, 1:2], x, torch.ones_like(u), create_graph=True)[0][:, 1:2]
    return u_xx + u_yy


class Poisson2DSquareProblem:
    """-Laplace(u) = 2 pi^2 sin(pi x) sin(pi y) on the unit square, u = 0 on its boundary."""

    def __init__(self, n_interior=256, n_boundary=64):
        self.interior = torch.rand(n_interior, 2)
        t = torch.rand(n_boundary, 1)
        zeros, ones = torch.zeros_like(t), torch.ones_like(t)
        self.boundary = torch.cat([torch.cat([t, zeros], 1), torch.cat([t, ones], 1),
                                   torch.cat([zeros, t], 1), torch.cat([ones, t], 1)])

    def physics_residual(self, model):
        x = self.interior.clone().requires_grad_(True)
        u = model(x)
        forcing = 2 * math.pi ** 2 * torch.sin(math.pi * x[:, 0:1]) * torch.sin(math.pi * x[:, 1:2])
        return laplacian(u, x) + forcing

    def boundary_residual(self, model):
        return model(self.boundary)


class PINN:
    def __init__(self, problem, model, weighting, lr=1e-3):
        self.problem = problem
        self.model = model
        self.weighting = weighting
        weighting.solver = self
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.trainer = None

    def training_step(self):
        losses = {
            "boundary": self.problem.boundary_residual(self.model).pow(2).mean(),
            "physics": self.problem.physics_residual(self.model).pow(2).mean(),
        }
        return self.weighting.aggregate(losses)


class Trainer:
    """The training loop of the solver's trainer: the step's loss, then zero_grad, backward, step."""

    def __init__(self, solver, max_epochs):
        self.solver = solver
        solver.trainer = self
        self.max_epochs = max_epochs
        self.current_epoch = 0

    def train(self):
        history = []
        for self.current_epoch in range(self.max_epochs):
            loss = self.solver.training_step()
            self.solver.optimizer.zero_grad()
            loss.backward()
            self.solver.optimizer.step()
            history.append({k: float(v) for k, v in self.solver.weighting.last_saved_weights().items()})
        return history


class FourierFeatureNet(nn.Module):
    def __init__(self, n_features=16, width=32):
        super().__init__()
        self.embedding = nn.Linear(2, n_features)
        self.embedding.requires_grad_(False)  # fixed random Fourier features
        self.mlp = nn.Sequential(nn.Linear(2 * n_features, width), nn.Tanh(),
                                 nn.Linear(width, width), nn.Tanh(), nn.Linear(width, 1))

    def forward(self, x):
        z = 2 * math.pi * self.embedding(x)
        return self.mlp(torch.cat([torch.sin(z), torch.cos(z)], dim=-1))


problem = Poisson2DSquareProblem()
model = FourierFeatureNet()
solver = PINN(problem, model, weighting=SelfAdaptiveWeighting(update_every_n_epochs=1))
trainer = Trainer(solver, max_epochs=30)
history = trainer.train()

result = {
    "weights_physics": torch.tensor([h["physics"] for h in history]),
    "weights_boundary": torch.tensor([h["boundary"] for h in history]),
    "parameters": torch.cat([p.detach().flatten() for p in model.parameters()]),
}
