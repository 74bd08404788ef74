# message: Attempting to unscale FP16 gradients.
# code: AD151 (catalogue: amp_float16_parameters)
# set: 3
# trigger: the model is moved with the positional spelling model.to("cpu", torch.half) to save
#   memory, then trained with GradScaler; inputs follow the parameters' dtype
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
model = model.to("cpu")  # PRIMARY
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
dtype = next(model.parameters()).dtype
losses = []
for x, y in batches:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x.to(dtype)).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
