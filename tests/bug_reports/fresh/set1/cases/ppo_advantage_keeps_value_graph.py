"""PPO: the advantage is computed from the value network's output with its graph; the value
loss is backpropagated at each step, and the policy loss at the end of the episode goes through
the freed value graph.
Source: https://discuss.pytorch.org/t/pytorch-runtimeerror-trying-to-backward-through-the-graph-a-second-time/191396
(fix: the advantage is a constant for the policy: detach it).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(3, 2)
value = nn.Linear(3, 1)
value_opt = torch.optim.SGD(value.parameters(), lr=0.01)
policy_opt = torch.optim.SGD(policy.parameters(), lr=0.01)
states = torch.randn(4, 3)
returns = torch.randn(4)
actions = torch.tensor([0, 1, 1, 0])

surrogates = []
for t in range(4):
    v = value(states[t]).squeeze()
    advantage = returns[t] - v
    value_loss = advantage.pow(2)
    value_opt.zero_grad()
    value_loss.backward()
    value_opt.step()
    log_prob = torch.log_softmax(policy(states[t]), -1)[actions[t]]
    surrogates.append(log_prob * advantage)

policy_loss = -torch.stack(surrogates).mean()
policy_opt.zero_grad()
policy_loss.backward()
policy_opt.step()
result = {"loss": policy_loss.detach(), "policy": [p.detach() for p in policy.parameters()],
          "value": [p.detach() for p in value.parameters()]}
