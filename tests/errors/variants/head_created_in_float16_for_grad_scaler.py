# message: Attempting to unscale FP16 gradients.
# code: AD151 (catalogue: amp_float16_parameters)
# set: 4
# trigger: the classifier head is created with dtype=torch.float16 (a factory keyword, no .half()),
#   trained with GradScaler; unscale_ before clipping refuses float16 gradients
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(4, 8)
        self.head = nn.Linear(8, 3, dtype=torch.float16)  # PRIMARY

    def forward(self, x):
        h = torch.relu(self.body(x))
        return self.head(h.to(self.head.weight.dtype)).float()


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
