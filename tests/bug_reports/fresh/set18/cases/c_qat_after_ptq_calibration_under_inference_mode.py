"""Quantisation-aware training (QAT) after post-training quantisation (PTQ): a fake-quantised
activation takes its 8-bit scale from a calibration pass, and QAT then trains through it with a
straight-through rounding. The calibration runs inside the evaluation helper, which (as
Lightning's evaluation loop does by default) runs under `torch.inference_mode()`: the scale it
stores is an inference tensor, and the first QAT forward, whose division saves the scale for
backward, fails with "Inference tensors cannot be saved for backward".
Source: https://github.com/luxonis/luxonis-train/pull/406 ("QAT after PTQ could crash because
Lightning evaluation runs used `inference_mode=True`, which caused tensors from the PTQ/test pass
to be reused later in QAT under autograd"; fixed by running the quantisation evaluation passes
without inference mode).
expect: raises"""
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
    with torch.inference_mode():
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
