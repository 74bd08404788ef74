# message: Output 0 of GradReverse is a view and is being modified inplace. This view was created inside a custom Function
# code: AD107 (catalogue: custom_function_view_inplace)
# trigger: a domain-adversarial (DANN) gradient reversal Function returns x.view_as(x); the
#   domain classifier behind it starts with nn.ReLU(inplace=True), which writes into that view
# source: https://github.com/fungtion/DANN/issues/3
# results: loss, features, domain_head
import torch
from torch import nn


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad.neg() * ctx.alpha, None


class DomainHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(4, 1))

    def forward(self, feats, alpha):
        reversed_feats = GradReverse.apply(feats, alpha).clone()  # PRIMARY
        return self.net(reversed_feats)


torch.manual_seed(0)
features = nn.Linear(3, 4)
domain_head = DomainHead()
loss = domain_head(features(torch.randn(5, 3)), 0.5).pow(2).mean()
loss.backward()
