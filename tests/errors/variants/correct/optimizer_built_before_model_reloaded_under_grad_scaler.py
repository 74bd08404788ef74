# message: No inf checks were recorded for this optimizer.
# code: AD167 (catalogue: amp_step_without_gradients)
# set: 16
# trigger: a fine-tuning script builds the optimizer, then replaces the model with a freshly built one
#   loaded from a checkpoint (model = build_model(); model.load_state_dict(...)); the optimizer still
#   holds the first model's parameters, which get no gradient, and GradScaler.step() finds none
# source: none found; the pattern as users write it (resume logic placed after the optimizer)
# results: model
import torch
from torch import nn


def build_model():
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))


torch.manual_seed(0)
checkpoint = build_model().state_dict()
model = build_model()
model = build_model()
model.load_state_dict(checkpoint)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # PRIMARY
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(8, 3), torch.randn(8, 1)
for _ in range(3):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x)
    loss = (out.float() - y).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
