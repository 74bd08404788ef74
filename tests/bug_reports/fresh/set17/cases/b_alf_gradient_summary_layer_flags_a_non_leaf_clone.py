"""An actor-critic agent whose value network has a gradient-monitoring layer between its encoder
and its head: the layer clones its input, switches gradients on for the clone
(`x.requires_grad = True`, so that the input's gradient can be summarised even for raw
observations) and registers a hook that records the gradient's norm. Placed after the encoder,
its input already requires grad, so the clone is not a leaf and the assignment raises "you can
only change requires_grad flags of leaf variables. If you want to use a computed variable in a
subgraph that doesn't require differentiation use var_no_grad = var.detach()".
Source: https://github.com/HorizonRobotics/alf/pull/1553 ("Fix SummarizeGradient": "the cloned
tensor is not a leaf. And torch does not allow setting requires_grad for non-leaf tensor"; the
layer now summarises the gradient only when its input requires grad, without changing the
flag), after https://github.com/HorizonRobotics/alf/pull/1250 introduced the layer.
expect: raises"""
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
        x.requires_grad = True
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
