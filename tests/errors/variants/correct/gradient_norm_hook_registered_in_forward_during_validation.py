# message: cannot register a hook on a tensor that doesn't require gradient
# code: AD116 (catalogue: hook_no_grad)
# set: 11
# trigger: a module's forward registers a tensor hook on its hidden activation every time it runs,
#   to record the gradient norm reaching it; the Trainer-like loop validates under torch.no_grad(),
#   where the activation does not require grad
# source: none found; the pattern as users write it (gradient monitoring hooks registered in
#   forward)
# results: model.gradient_norms, losses, model
import torch
from torch import nn


class MonitoredNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.head = nn.Linear(4, 1)
        self.gradient_norms = []

    def forward(self, x):
        h = torch.tanh(self.encoder(x))
        if h.requires_grad:  # PRIMARY
            h.register_hook(lambda grad: self.gradient_norms.append(grad.norm().item()))
        return self.head(h)


torch.manual_seed(0)
model = MonitoredNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        losses.append((model(x) - y).pow(2).mean().item())
