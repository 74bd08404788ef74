# message: The function 'binary_cross_entropy' is not differentiable with respect to argument 'weight'. This input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 9
# trigger: a focal loss module computes its modulating factor (1 - p_t) ** gamma from the model's
#   probabilities and passes it as the weight= of F.binary_cross_entropy
# source: none found; the pattern as users write it (focal loss through BCE's weight argument)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, gamma):
        super().__init__()
        self.gamma = gamma

    def forward(self, probabilities, targets):
        p_t = probabilities * targets + (1 - probabilities) * (1 - targets)
        return F.binary_cross_entropy(probabilities, targets, weight=(1 - p_t) ** self.gamma)  # PRIMARY


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
criterion = FocalLoss(gamma=2.0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, targets = torch.randn(8, 3), torch.tensor([[1.0], [0.0], [1.0], [1.0], [0.0], [0.0], [1.0], [0.0]])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = criterion(model(x), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
