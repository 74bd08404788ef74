# message: No inf checks were recorded for this optimizer.
# code: AD167 (catalogue: amp_step_without_gradients)
# set: 14
# trigger: a linear probe under mixed precision: the encoder is frozen with requires_grad_(False)
#   and the optimizer is built on model.encoder.parameters() instead of the probe's, so
#   scaler.step() finds no gradient in any of the optimizer's parameters
# source: none found; the pattern as users write it (the wrong sub-module given to the optimizer)
# results: model, losses
import torch
from torch import nn


class Probe(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
        self.classifier = nn.Linear(6, 3)

    def forward(self, x):
        return self.classifier(self.encoder(x))


torch.manual_seed(0)
model = Probe()
model.encoder.requires_grad_(False)
optimizer = torch.optim.SGD(model.encoder.parameters(), lr=0.1)  # PRIMARY
scaler = torch.amp.GradScaler("cpu")
x, labels = torch.randn(6, 5), torch.tensor([0, 1, 2, 2, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
    loss = nn.functional.cross_entropy(logits.float(), labels)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
