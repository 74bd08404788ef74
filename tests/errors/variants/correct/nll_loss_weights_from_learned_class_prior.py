# message: The function 'nll_loss_forward' is not differentiable with respect to argument 'weight'. This
#   input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 12
# trigger: a classifier with a learned class prior (a parameter of the model) weighs nll_loss by the
#   inverse of the prior's softmax, computed in the model's loss method
# source: none found; the pattern as users write it (class weights derived from a learned prior)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class PriorClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 3)
        self.prior_logits = nn.Parameter(torch.tensor([0.5, 0.0, -0.5]))

    def loss(self, x, labels):
        log_probs = (self.net(x) + self.prior_logits).log_softmax(dim=1)
        class_weights = 1.0 / self.prior_logits.softmax(dim=0)
        return F.nll_loss(log_probs, labels, weight=class_weights.detach())  # PRIMARY


torch.manual_seed(0)
model = PriorClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.loss(x, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
