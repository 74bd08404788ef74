"""The actor draws a reparameterised action: the critic's gradient reaches it."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)

    def forward(self, state):
        mean, log_std = self.body(state).chunk(2, dim=-1)
        action = mean + log_std.clamp(-2, 1).exp() * torch.randn_like(mean)
        return torch.tanh(action)


actor = Actor()
critic = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.SGD(actor.parameters(), lr=0.1)
states = torch.randn(16, 3)
for step in range(3):
    action = actor(states)
    loss = -critic(torch.cat([states, action], dim=-1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in actor.parameters()]
