"""REINFORCE: each step's policy-gradient term is built from `log_prob.item()`, a Python number,
accumulated with -= in a loop and averaged: only the entropy bonus trains the policy."""
import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(3, 4)
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
states = torch.randn(5, 3)
returns = torch.linspace(1.0, 0.2, 5)
actions = torch.tensor([0, 3, 1, 1, 2])
log_probs = torch.log_softmax(policy(states), dim=1)
entropy = -(log_probs.exp() * log_probs).sum(1).mean()
loss = -0.01 * entropy
for t in range(5):
    loss -= log_probs[t, actions[t]].item() * returns[t]  # PRIMARY
loss = loss / 5
optimizer.zero_grad()
loss.backward()
optimizer.step()
result = [p.detach().clone() for p in policy.parameters()]
