"""Actor-critic updated concurrently: the policy loss's backward also accumulates gradients into
the Q network, whose optimizer then steps with them (no error).
Source: https://github.com/watchernyu/REDQ/pull/3 (fix: keep the policy loss's gradients out of
the Q network).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
q_net = nn.Linear(3, 1)
policy = nn.Linear(2, 1)
q_opt = torch.optim.SGD(q_net.parameters(), lr=0.1)
pi_opt = torch.optim.SGD(policy.parameters(), lr=0.1)
obs = torch.randn(4, 2)
act_taken = torch.randn(4, 1)
q_target = torch.randn(4, 1)

q_loss = (q_net(torch.cat([obs, act_taken], 1)) - q_target).pow(2).mean()
action = torch.tanh(policy(obs))
pi_loss = -q_net(torch.cat([obs, action], 1)).mean()
q_opt.zero_grad()
pi_opt.zero_grad()
q_loss.backward()
for p, g in zip(policy.parameters(), torch.autograd.grad(pi_loss, list(policy.parameters()))):
    p.grad = g
q_opt.step()
pi_opt.step()
result = {"q": [p.detach() for p in q_net.parameters()], "pi": [p.detach() for p in policy.parameters()]}
