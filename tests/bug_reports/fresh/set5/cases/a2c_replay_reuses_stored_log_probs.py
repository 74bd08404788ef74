"""Actor-critic with experience replay: the agent stores each step's `log_prob` (with its graph)
in the replay memory and later samples old transitions to learn from; a stored `log_prob`'s graph
was freed by an earlier `backward()`, or holds weights that `optimizer.step()` has since changed
in place.
Source: https://github.com/philtabor/Youtube-Code-Repository/issues/19 ("A2C with experience
replay": the stored log_probs' graph is cleared; "log_probs need to be recomputed in learning
function the same way as outputs of critic network").
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=1e-3)
states = torch.randn(6, 4)
next_states = torch.randn(6, 4)
rewards = torch.randn(6)

memory = []
for t in range(6):
    dist = torch.distributions.Categorical(logits=actor(states[t]))
    action = dist.sample()
    memory.append((states[t], action, dist.log_prob(action), rewards[t], next_states[t]))

losses = []
for batch in ([0, 1, 2], [2, 3, 4]):
    optimizer.zero_grad()
    loss = 0
    for i in batch:
        state, action, log_prob, reward, next_state = memory[i]
        advantage = reward + 0.99 * critic(next_state).detach() - critic(state)
        loss = loss + (-log_prob * advantage.detach() + advantage ** 2).sum()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in actor.parameters()]}
