"""REINFORCE fine-tuning of a generator: the policy-gradient term is built from
`log_probs[...].item() * reward`, a Python float, so only the entropy bonus trains the network;
the rewarded behaviour is never learned (no error).
Source: https://github.com/isayev/ReLeaSE/issues/39 (answer: `.item()` / `.detach().numpy()`
detach the loss from the graph; keep the log-probability a tensor).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 5))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
states = torch.randn(6, 4)
discounted_rewards = torch.linspace(1.0, 0.2, 6)

log_probs = torch.log_softmax(policy(states), dim=1)
actions = torch.multinomial(log_probs.exp(), 1).squeeze(1)
entropy = -(log_probs.exp() * log_probs).sum(1).mean()
rl_loss = -0.01 * entropy
for step in range(6):
    rl_loss -= log_probs[step, actions[step]] * discounted_rewards[step]
rl_loss = rl_loss / 6
optimizer.zero_grad()
rl_loss.backward()
optimizer.step()
result = {"loss": rl_loss.detach(), "params": [p.detach() for p in policy.parameters()]}
