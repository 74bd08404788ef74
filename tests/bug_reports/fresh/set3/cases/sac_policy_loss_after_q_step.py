"""Soft actor-critic update: the Q-function is stepped first, then the policy loss, computed through
the Q-function before that step, is backpropagated through the weights the step changed in place.
Source: https://github.com/rail-berkeley/rlkit/pull/109 (fix: optimize the policy before the
Q-function).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(3, 1)
qf = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
qf_optimizer = torch.optim.Adam(qf.parameters(), lr=1e-2)
obs, actions = torch.randn(8, 3), torch.randn(8, 1)
q_target = torch.randn(8, 1)

new_actions = torch.tanh(policy(obs))
policy_loss = -qf(torch.cat([obs, new_actions], dim=1)).mean()
q_pred = qf(torch.cat([obs, actions], dim=1))
qf_loss = (q_pred - q_target).pow(2).mean()

qf_optimizer.zero_grad()
qf_loss.backward()
qf_optimizer.step()

policy_optimizer.zero_grad()
policy_loss.backward()
policy_optimizer.step()
result = {"losses": [policy_loss.detach(), qf_loss.detach()],
          "params": [p.detach() for p in [*policy.parameters(), *qf.parameters()]]}
