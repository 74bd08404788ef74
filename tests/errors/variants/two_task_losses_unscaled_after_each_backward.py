# message: unscale_() has already been called on this optimizer since the last update().
# code: AD148 (catalogue: amp_unscale_every_micro_batch)
# set: 7
# trigger: a multi-task step backpropagates two losses one after the other through the same
#   GradScaler and unscales and clips after each backward(), before the one scaler.step()
# source: none found; the pattern as users write it (the AMP docs: unscale_ once per step,
#   after all gradients are accumulated)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.regression = nn.Linear(4, 1)
        self.classification = nn.Linear(4, 2)

    def forward(self, x):
        h = torch.tanh(self.body(x))
        return self.regression(h), self.classification(h)


torch.manual_seed(0)
model = TwoHeads()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
x, y, labels = torch.randn(4, 3), torch.randn(4, 1), torch.tensor([0, 1, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    value, logits = model(x)
    regression_loss = F.mse_loss(value, y)
    scaler.scale(regression_loss).backward(retain_graph=True)
    scaler.unscale_(optimizer)  # PRIMARY
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    classification_loss = F.cross_entropy(logits, labels)
    scaler.scale(classification_loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(regression_loss.item() + classification_loss.item())
