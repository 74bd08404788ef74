# message: The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. This input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 4
# trigger: cross_entropy's class weights come from a label-prior parameter of the model that the
#   optimizer does not train (only the network's parameters are given to it)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class PriorCorrectedClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.prior_logits = nn.Parameter(torch.tensor([0.5, 0.0, -0.5]))

    def loss(self, x, y):
        class_weight = 1.0 / torch.softmax(self.prior_logits, dim=0)
        return F.cross_entropy(self.net(x), y, weight=class_weight.detach())  # PRIMARY


torch.manual_seed(0)
model = PriorCorrectedClassifier()
optimizer = torch.optim.SGD(model.net.parameters(), lr=0.1)
x, y = torch.randn(6, 4), torch.tensor([0, 1, 2, 2, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.loss(x, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
