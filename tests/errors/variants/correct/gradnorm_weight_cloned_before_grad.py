# message: The differentiated Tensor at index 0 appears to not have been used in the graph. Set
#   allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# set: 7
# trigger: GradNorm: the gradient of each task's loss with respect to the shared layer's weight is
#   taken as torch.autograd.grad(task_loss, shared.weight.clone(), ...): the clone is a new
#   tensor that the loss was not computed from
# source: https://github.com/hosseinshn/GradNorm/issues/10
# results: losses, model, task_weights
import torch
from torch import nn
import torch.nn.functional as F


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(3, 4)
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])

    def forward(self, x):
        h = torch.relu(self.shared(x))
        return [head(h) for head in self.heads]


torch.manual_seed(0)
model = MultiTask()
task_weights = nn.Parameter(torch.ones(2))
optimizer = torch.optim.SGD(list(model.parameters()) + [task_weights], lr=0.05)
x, targets = torch.randn(6, 3), [torch.randn(6, 1), torch.randn(6, 1)]
losses = []
for _ in range(2):
    optimizer.zero_grad()
    task_losses = [F.mse_loss(out, t) for out, t in zip(model(x), targets)]
    norms = []
    for i, task_loss in enumerate(task_losses):
        g = torch.autograd.grad(task_weights[i] * task_loss, model.shared.weight,  # PRIMARY
                                retain_graph=True, create_graph=True)[0]
        norms.append(g.norm())
    norms = torch.stack(norms)
    balance = (norms - norms.mean().detach()).abs().sum()
    total = sum(w * l for w, l in zip(task_weights, task_losses)) + 0.1 * balance
    total.backward()
    optimizer.step()
    losses.append(total.item())
