# message: The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. This input
#   cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 13
# trigger: a classifier re-weights its classes with F.cross_entropy(weight=...), the weights computed
#   in forward from a learned class-frequency parameter (softmax of its logits); cross_entropy passes
#   them to nll_loss, which has no derivative for its weight
# source: none found; the pattern as users write it (learned class balancing through cross_entropy)
# results: model, losses
import torch
import torch.nn.functional as F
from torch import nn


class BalancedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.frequency_logits = nn.Parameter(torch.zeros(3))

    def loss(self, x, labels):
        weights = 1.0 / (3 * torch.softmax(self.frequency_logits, dim=0))
        return F.cross_entropy(self.linear(x), labels, weight=weights)  # PRIMARY


torch.manual_seed(0)
model = BalancedClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.loss(x, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
