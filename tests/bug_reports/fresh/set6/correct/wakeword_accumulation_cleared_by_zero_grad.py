"""Wake-word detection with gradient accumulation: the training loop steps the optimizer only once
at least 128 samples have been accumulated, but it calls `optimizer.zero_grad()` at the start of
every iteration, so the gradients of the smaller batches before the step are thrown away (no
error).
Source: https://github.com/dscripka/openWakeWord/issues/316 ("Gradient Accumulation is wrong: when
accumulated_samples < 128, loss is cleared in next iteration by self.optimizer.zero_grad()").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class WakeWordModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(16 * 12, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, features):
        return self.net(features).squeeze(-1)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def train(self, batches, min_samples=128):
        accumulated_samples = 0
        losses = []
        for features, labels in batches:
            loss = F.binary_cross_entropy_with_logits(self.model(features), labels)
            loss.backward()
            accumulated_samples += labels.shape[0]
            if accumulated_samples >= min_samples:
                self.optimizer.step()
                self.optimizer.zero_grad()
                accumulated_samples = 0
            losses.append(loss.detach())
        return losses


batches = [(torch.randn(48, 16, 12), (torch.rand(48) > 0.5).float()) for _ in range(6)]
model = WakeWordModel()
losses = Trainer(model).train(batches)
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
