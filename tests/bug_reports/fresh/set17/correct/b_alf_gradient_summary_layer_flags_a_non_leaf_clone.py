"""The gradient-monitoring layer registers its hook only when its input requires grad, and
leaves the flag alone.
Source: https://github.com/HorizonRobotics/alf/pull/1553."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, HIDDEN, ACTIONS = 6, 32, 3


class SummarizeGradient(nn.Module):
    def __init__(self, name, log):
        super().__init__()
        self.name = name
        self.log = log

    def forward(self, x):
        x = x.clone()
        if x.requires_grad:
            x.register_hook(lambda grad: self.log.append((self.name, grad.norm().detach())))
        return x


gradient_log = []
encoder = nn.Sequential(nn.Linear(OBS, HIDDEN), nn.Tanh())
value_head = nn.Sequential(SummarizeGradient("value_input", gradient_log), nn.Linear(HIDDEN, 1))
policy_head = nn.Linear(HIDDEN, ACTIONS)
params = list(encoder.parameters()) + list(value_head.parameters()) + list(policy_head.parameters())
optimizer = torch.optim.Adam(params, lr=3e-3)

losses = []
for update in range(4):
    obs = torch.randn(16, OBS)
    returns = torch.randn(16)
    features = encoder(obs)
    values = value_head(features).squeeze(-1)
    dist = torch.distributions.Categorical(logits=policy_head(features))
    actions = dist.sample()
    advantages = (returns - values).detach()
    loss = -(dist.log_prob(actions) * advantages).mean() + 0.5 * F.mse_loss(values, returns)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "grad_norms": torch.stack([n for _, n in gradient_log]),
          "params": [p.detach().clone() for p in params]}
