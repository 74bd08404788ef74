# message: Output 2 of Split is a view and is being modified inplace. This view is the output of a
#   function that returns multiple views. Such functions do not allow the output views to be modified
#   inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 14
# trigger: a mixture density network splits its head's output into logits, means and log-scales with
#   torch.split(out, 3, dim=-1) and turns the log-scales into scales with exp_() to save memory
# source: none found; the pattern as users write it (mixture density heads)
# results: model, losses
import torch
from torch import nn


class MixtureDensityNetwork(nn.Module):
    def __init__(self, components=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 3 * components))

    def forward(self, x):
        logits, means, scales = torch.split(self.body(x), 3, dim=-1)
        scales = scales.exp()  # PRIMARY
        return logits, means, scales


def mixture_nll(logits, means, scales, y):
    log_prob = torch.distributions.Normal(means, scales).log_prob(y)
    return -torch.logsumexp(log_prob + logits.log_softmax(-1), dim=-1).mean()


torch.manual_seed(0)
model = MixtureDensityNetwork()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(7, 2), torch.randn(7, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = mixture_nll(*model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
