import torch
from torch import nn
import torch.nn.functional as F


def build():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


torch.manual_seed(0)
saved = {name: tensor.half() for name, tensor in build().state_dict().items()}
model = build()
model.load_state_dict(saved)  # PRIMARY
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x.to(model[0].weight.dtype))
    loss = F.cross_entropy(logits.float(), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
