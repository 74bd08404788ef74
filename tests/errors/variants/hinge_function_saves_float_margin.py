# message: save_for_backward can only save variables, but argument 2 is of type float
# code: AD122 (catalogue: save_for_backward_non_tensor)
# set: 9
# trigger: a hand-written hinge loss Function takes its margin from the model's config dataclass (a
#   Python float) and saves it with save_for_backward along with the scores and labels
# source: none found; the pattern as users write it (hyper-parameters passed to custom Functions)
# results: losses, model
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Config:
    margin: float = 1.0


class Hinge(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, labels, margin):
        ctx.save_for_backward(scores, labels, margin)  # PRIMARY
        return (margin - scores * labels).clamp_min(0).mean()

    @staticmethod
    def backward(ctx, grad):
        scores, labels, margin = ctx.saved_tensors
        active = (scores * labels < margin).to(scores.dtype)
        return -grad * labels * active / scores.numel(), None, None


class Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.score = nn.Linear(3, 1)

    def loss(self, x, labels):
        return Hinge.apply(self.score(x).squeeze(-1), labels, self.config.margin)


torch.manual_seed(0)
model = Model(Config())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(6, 3), torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model.loss(x, labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
