# message: The function 'binary_cross_entropy_with_logits' is not differentiable with respect to argument 'pos_weight'.
# code: AD140 (catalogue: non_differentiable_weight)
# trigger: a multi-label classifier keeps its positive-class weights as a parameter on self
#   (log scale) and passes their exp() as pos_weight= to binary_cross_entropy_with_logits
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn
import torch.nn.functional as F


class MultiLabel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.log_pos_weight = nn.Parameter(torch.zeros(3))

    def loss(self, x, targets):
        logits = self.fc(x)
        return F.binary_cross_entropy_with_logits(logits, targets, pos_weight=self.log_pos_weight.exp().detach())  # PRIMARY


torch.manual_seed(0)
model = MultiLabel()
x, targets = torch.randn(5, 4), (torch.rand(5, 3) > 0.5).float()
loss = model.loss(x, targets)
loss.backward()
