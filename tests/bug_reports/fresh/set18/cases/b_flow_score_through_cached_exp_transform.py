"""Score distillation from a log-normal flow: a small network is trained to predict the score
(the gradient of the log-density) of a fixed two-dimensional log-normal density, written as a
`TransformedDistribution` of a Normal through an affine map and `ExpTransform(cache_size=1)`.
The targets are the flow's own samples' scores: `y = flow.sample(...)`, `y.requires_grad_(True)`,
`torch.autograd.grad(flow.log_prob(y).sum(), y)`. The exp transform cached the pair (x, y) when it
drew the sample, so `log_prob(y)` finds `y` in its cache and returns the cached `x`, which was
computed without a graph: the log-density does not depend on `y` at all, and `autograd.grad`
raises "element 0 of tensors does not require grad and does not have a grad_fn".
Source: https://github.com/pyro-ppl/pyro/issues/2292 ("Gradient on transforms currently fail with
in-place modification to tensor attributes": transforms built with `cache_size=1` return the
cached input when asked to invert the very tensor they produced, so transforming `x` and then
differentiating with respect to `x.requires_grad_(True)` fails; the transforms that have to be
differentiated are built without the cache).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import AffineTransform, ExpTransform

torch.manual_seed(0)

base = Normal(torch.zeros(2), torch.ones(2))
flow = TransformedDistribution(base, [AffineTransform(torch.tensor([0.3, -0.2]), torch.tensor([0.8, 0.5])),
                                      ExpTransform(cache_size=1)])


def flow_score(samples):
    samples.requires_grad_(True)
    log_density = flow.log_prob(samples).sum()
    return torch.autograd.grad(log_density, samples)[0]


score_net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(score_net.parameters(), lr=1e-2)

losses = []
for step in range(15):
    samples = flow.sample((64,))
    target = flow_score(samples)
    loss = F.mse_loss(score_net(samples.detach()), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in score_net.parameters()]}
