"""Physics-informed network: the validation step needs the derivative of the network's output with
respect to its input, but the trainer runs validation under `torch.inference_mode()` by default
(as Lightning's `Trainer(inference_mode=True)` does), so the output does not require grad.
Source: https://github.com/rezaakb/pinns-torch/issues/12 ("the output of the neural network doesn't
require gradient" in validation; answer: create the trainer with `inference_mode=False`).
expect: raises"""
import torch
import torch.nn as nn


class MiniTrainer:
    """The two parts of a Lightning-style trainer that matter here: a training step with
    gradients, and validation under inference mode unless told otherwise."""

    def __init__(self, max_epochs=2, inference_mode=True):
        self.max_epochs = max_epochs
        self.inference_mode = inference_mode

    def fit(self, module, train_points, val_points):
        optimizer = torch.optim.Adam(module.parameters(), lr=1e-2)
        history = []
        for _ in range(self.max_epochs):
            loss = module.training_step(train_points)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.inference_mode(self.inference_mode):
                val_loss = module.validation_step(val_points)
            history.append((loss.detach(), val_loss.detach()))
        return history


class HeatPINN(nn.Module):
    """u_t = 0.1 * u_xx on (x, t), residual computed with autograd."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))

    def residual(self, points):
        points = points.clone().requires_grad_(True)
        u = self.net(points)
        du = torch.autograd.grad(u, points, torch.ones_like(u), create_graph=True)[0]
        u_xx = torch.autograd.grad(du[:, :1], points, torch.ones_like(u), create_graph=True)[0][:, :1]
        return du[:, 1:] - 0.1 * u_xx

    def training_step(self, points):
        return self.residual(points).pow(2).mean()

    def validation_step(self, points):
        return self.residual(points).pow(2).mean()


torch.manual_seed(0)
model = HeatPINN()
trainer = MiniTrainer(max_epochs=2, inference_mode=False)
history = trainer.fit(model, torch.rand(32, 2), torch.rand(16, 2))
result = {"history": [torch.stack(row) for row in history], "params": [p.detach() for p in model.parameters()]}
