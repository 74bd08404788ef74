# message: Trying to backward through the graph a second time (or directly access saved tensors
#   after they have already been freed). Saved intermediate values of the graph are freed when you
#   call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through
#   the graph a second time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 5
# trigger: multi-task balancing (GradNorm-like): the gradient of the first task's loss with
#   respect to the shared layer is taken with torch.autograd.grad to weight the tasks, then the
#   weighted sum of both losses is backpropagated through the same shared layer
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class SharedTrunk(nn.Module):
    def __init__(self):
        super().__init__()
        self.shared = nn.Linear(3, 4)
        self.head_a = nn.Linear(4, 1)
        self.head_b = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.shared(x))
        return self.head_a(h), self.head_b(h)


torch.manual_seed(0)
model = SharedTrunk()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y_a, y_b = torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    out_a, out_b = model(x)
    loss_a, loss_b = F.mse_loss(out_a, y_a), F.mse_loss(out_b, y_b)
    grad_a, = torch.autograd.grad(loss_a, model.shared.weight, retain_graph=True)  # PRIMARY
    weight_a = 1.0 / (1.0 + grad_a.norm().item())
    loss = weight_a * loss_a + (1.0 - weight_a) * loss_b
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
