"""Q-learning on a small control task without a target network: the bootstrapped target
r + gamma * max_a Q(s', a) is computed by the Q-network being trained, with gradients on. The loss
then also pulls Q(s') towards Q(s) (a residual gradient), not the Q-learning update, which holds
the target fixed. Nothing raises."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 3))

    def forward(self, states):
        return self.body(states)


def learn(q_network, optimizer, batch, discount):
    states, actions, rewards, next_states, finished = batch
    chosen = q_network(states).gather(1, actions[:, None])[:, 0]
    best_next = q_network(next_states).amax(dim=1)
    bootstrapped = (rewards + discount * (1.0 - finished) * best_next).unsqueeze(1)
    loss = F.smooth_l1_loss(chosen.unsqueeze(1), bootstrapped)  # PRIMARY
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


q_network = QNetwork()
optimizer = torch.optim.SGD(q_network.parameters(), lr=0.05)
for _ in range(4):
    states = torch.randn(24, 4)
    batch = (states, torch.randint(0, 3, (24,)), torch.randn(24), states + 0.1 * torch.randn(24, 4),
             (torch.rand(24) < 0.2).float())
    learn(q_network, optimizer, batch, discount=0.9)
result = [p.detach().clone() for p in q_network.parameters()]
