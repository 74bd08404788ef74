"""The evaluation pass that calibrates runs under `torch.no_grad()`, so the scale it stores is an
ordinary tensor that QAT can save for backward.
Source: https://github.com/luxonis/luxonis-train/pull/406."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FakeQuantActivation(nn.Module):
    def __init__(self):
        super().__init__()
        self.calibrating = False
        self.scale = None

    def forward(self, x):
        if self.calibrating:
            self.scale = x.abs().amax() / 127
            return x
        steps = x / self.scale
        steps = steps + (steps.round().clamp(-128, 127) - steps).detach()
        return steps * self.scale


def evaluate(model, inputs, targets):
    model.eval()
    with torch.no_grad():
        return F.mse_loss(model(inputs), targets)


model = nn.Sequential(nn.Linear(8, 16), FakeQuantActivation(), nn.ReLU(), nn.Linear(16, 1))
calibration_x, calibration_y = torch.randn(32, 8), torch.randn(32, 1)
train_x, train_y = torch.randn(32, 8), torch.randn(32, 1)

model[1].calibrating = True
ptq_loss = evaluate(model, calibration_x, calibration_y)
model[1].calibrating = False

optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
model.train()
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = F.mse_loss(model(train_x), train_y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"ptq_loss": ptq_loss.clone(), "losses": torch.stack(losses),
          "params": [p.detach().clone() for p in model.parameters()]}
