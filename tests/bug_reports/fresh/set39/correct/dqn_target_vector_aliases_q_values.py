"""Deep Q-learning on a small continuous-state task with a discretised action space: the user
builds the regression target for the network by "copying" the network's own output,
`target_q_values = q_values`, and writes the Bellman target into the taken action's entry,
`target_q_values[action] = reward + gamma * max_next_q`. The assignment is a name copy, not a
copy of the tensor: the write lands in `q_values` itself, so `mse_loss(q_values, target_q_values)`
compares a tensor with itself. The loss is exactly zero at every step, no gradient reaches the
network, nothing raises, and the asker saw the network settle on the same Q-values for every
state. The answer: the target is a copy of the output vector with the taken action's entry
replaced by the bootstrapped target, which does not itself carry gradients
(`q_values.detach().clone()`, `max_next_q` without graph).
Source: https://ai.stackexchange.com/questions/26154/what-is-the-target-output-for-updating-a-deep-q-network
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

state_dim, n_actions, gamma = 4, 3, 0.9
model = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
transition = torch.randn(n_actions, state_dim, state_dim) * 0.5


def env_step(state, action):
    next_state = torch.tanh(transition[action] @ state)
    reward = float(next_state[0] - 0.1 * action)
    return next_state, reward


state = torch.randn(state_dim)
losses = []
for step in range(30):
    q_values = model(state)
    action = int(torch.argmax(q_values))
    next_state, reward = env_step(state, action)
    next_q_values = model(next_state)
    max_next_q = torch.max(next_q_values).detach()

    target_q_values = q_values.detach().clone()
    target_q_values[action] = reward + gamma * max_next_q

    loss = F.mse_loss(q_values, target_q_values)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    state = next_state if step % 5 else torch.randn(state_dim)

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
