"""Score distillation from a log-normal flow whose exp transform keeps no cache, so the log-density
of a sample is computed from the sample itself.
Source: https://github.com/pyro-ppl/pyro/issues/2292."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import AffineTransform, ExpTransform

torch.manual_seed(0)

base = Normal(torch.zeros(2), torch.ones(2))
flow = TransformedDistribution(base, [AffineTransform(torch.tensor([0.3, -0.2]), torch.tensor([0.8, 0.5])),
                                      ExpTransform()])


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
