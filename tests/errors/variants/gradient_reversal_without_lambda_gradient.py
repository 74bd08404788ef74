# message: function GradientReversalBackward returned an incorrect number of gradients (expected 2, got 1)
# code: AD120 (catalogue: function_wrong_count)
# set: 5
# trigger: domain-adversarial training: a gradient reversal Function takes the input and a float
#   coefficient lambda, and its backward returns only the reversed gradient of the input; used in
#   a model's forward between the feature extractor and the domain classifier
# source: https://yip-sakura.readthedocs.io/en/latest/api/sakura.utils.gradient_reverse.ReverseLayerF.backward.html
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, coefficient):
        ctx.coefficient = coefficient
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.coefficient  # PRIMARY


class DomainAdversarial(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 6)
        self.label_head = nn.Linear(6, 3)
        self.domain_head = nn.Linear(6, 2)

    def forward(self, x, coefficient):
        h = torch.relu(self.features(x))
        return self.label_head(h), self.domain_head(GradientReversal.apply(h, coefficient))


torch.manual_seed(0)
model = DomainAdversarial()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels, domains = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([0, 0, 0, 1, 1, 1])
losses = []
for step in range(2):
    optimizer.zero_grad()
    label_logits, domain_logits = model(x, coefficient=0.5)
    loss = F.cross_entropy(label_logits, labels) + F.cross_entropy(domain_logits, domains)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
