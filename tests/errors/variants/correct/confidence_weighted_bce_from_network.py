# message: The function 'binary_cross_entropy' is not differentiable with respect to argument
#   'weight'. This input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 3
# trigger: a model learns a per-sample confidence in a second head and passes it as the
#   `weight=` of F.binary_cross_entropy inside its compute_loss method
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ConfidentClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.prob = nn.Linear(4, 1)
        self.confidence = nn.Linear(4, 1)

    def compute_loss(self, x, target):
        features = torch.relu(self.body(x))
        probs = torch.sigmoid(self.prob(features))
        confidence = torch.sigmoid(self.confidence(features))
        loss = (F.binary_cross_entropy(probs, target, reduction="none") * confidence).mean()  # PRIMARY
        return loss - 0.1 * torch.log(confidence).mean()


torch.manual_seed(0)
model = ConfidentClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, target = torch.randn(8, 3), torch.randint(0, 2, (8, 1)).float()
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.compute_loss(x, target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
