# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# trigger: a hand-written SGD step over model.parameters() in a training loop, `p -= lr * p.grad`
#   without torch.no_grad()
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(3, 1)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
losses = []
for x, y in data:
    loss = F.mse_loss(model(x), y)
    losses.append(loss.item())
    model.zero_grad()
    loss.backward()
    for p in model.parameters():
        with torch.no_grad():
            p -= 0.1 * p.grad  # PRIMARY
