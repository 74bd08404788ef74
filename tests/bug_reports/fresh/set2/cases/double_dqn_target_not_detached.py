"""Double DQN: the TD target is computed from the same network without `detach()`, so the loss
also moves the target (no error; the update is not the semi-gradient one).
Source: https://github.com/datawhalechina/easy-rl/pull/117 (fix: detach the TD target).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
q_net = nn.Linear(3, 2)
optimizer = torch.optim.SGD(q_net.parameters(), lr=0.1)
state, next_state = torch.randn(4, 3), torch.randn(4, 3)
action = torch.tensor([0, 1, 1, 0])
reward = torch.randn(4)
gamma = 0.9

q_values = q_net(state).gather(1, action.unsqueeze(1)).squeeze(1)
next_q = q_net(next_state).max(1)[0]
td_target = reward + gamma * next_q
loss = (q_values - td_target).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
result = {"loss": loss.detach(), "params": [p.detach() for p in q_net.parameters()]}
