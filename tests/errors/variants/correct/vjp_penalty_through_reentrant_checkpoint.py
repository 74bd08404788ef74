# message: When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an
#   `inputs` parameter to .backward(). To resolve this error, you can either set
#   use_reentrant=False, or call .backward() without passing the `inputs` argument.
# code: AD126 (catalogue: checkpoint_reentrant_grad)
# set: 10
# trigger: a model's forward checkpoints its body with use_reentrant=True; a smoothness penalty takes
#   a vector-Jacobian product of the model at the inputs with torch.autograd.functional.vjp
#   (create_graph=True), which calls torch.autograd.grad through the checkpoint
# source: none found; the pattern as users write it (Jacobian norm penalties estimated with vjp)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.autograd.functional import vjp
from torch.utils.checkpoint import checkpoint


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        return self.head(checkpoint(self.body, x, use_reentrant=False))  # PRIMARY


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    _, input_gradient = vjp(model, x, torch.ones(6, 1), create_graph=True)
    loss = F.mse_loss(model(x), y) + 0.1 * input_gradient.pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
