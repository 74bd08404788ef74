# message: The function 'multi_margin_loss' is not differentiable with respect to argument 'weight'. This
#   input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 11
# trigger: a multi-class hinge classifier learns per-class costs (a softplus of a parameter of the
#   model) and passes them as the weight= of F.multi_margin_loss inside the model's loss method; the
#   optimizer trains only the network
# source: none found; the pattern as users write it (class costs kept on the model as parameters)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class CostSensitiveClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)
        self.raw_costs = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        return self.net(x)

    def loss(self, x, y):
        costs = F.softplus(self.raw_costs).detach()  # PRIMARY
        return F.multi_margin_loss(self(x), y, weight=costs)


torch.manual_seed(0)
model = CostSensitiveClassifier()
optimizer = torch.optim.SGD(model.net.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.loss(x, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
