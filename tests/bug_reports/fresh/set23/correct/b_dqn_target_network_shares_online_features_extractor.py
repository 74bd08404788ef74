"""The same DQN with the fix of the pull request: `make_q_net()` builds a new features extractor
for each Q-network, so the target network has feature layers of its own (copied from the online
network's at each target update).
Source: https://github.com/DLR-RM/stable-baselines3/pull/132"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, FEATURES, ACTIONS, BUFFER, BATCH, GAMMA = 6, 16, 3, 64, 16, 0.9

# A replay buffer of transitions, collected before the networks are built.
observations = torch.randn(BUFFER, OBS)
actions = torch.randint(0, ACTIONS, (BUFFER,))
rewards = torch.randn(BUFFER)
next_observations = torch.randn(BUFFER, OBS)
dones = (torch.rand(BUFFER) < 0.1).float()
batches = [torch.randint(0, BUFFER, (BATCH,)) for _ in range(30)]


class FeaturesExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS, FEATURES), nn.ReLU())

    def forward(self, obs):
        return self.net(obs)


class QNetwork(nn.Module):
    def __init__(self, features_extractor):
        super().__init__()
        self.features_extractor = features_extractor
        self.q_head = nn.Linear(FEATURES, ACTIONS)

    def forward(self, obs):
        return self.q_head(self.features_extractor(obs))


class DQNPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_net = self.make_q_net()
        self.q_net_target = self.make_q_net()
        self.q_net_target.load_state_dict(self.q_net.state_dict())

    def make_q_net(self):
        return QNetwork(FeaturesExtractor())


policy = DQNPolicy()
optimizer = torch.optim.Adam(policy.q_net.parameters(), lr=1e-2)

losses = []
for step, index in enumerate(batches):
    with torch.no_grad():
        next_q = policy.q_net_target(next_observations[index]).max(dim=1).values
        target_q = rewards[index] + GAMMA * (1 - dones[index]) * next_q
    current_q = policy.q_net(observations[index]).gather(1, actions[index].unsqueeze(1)).squeeze(1)
    loss = F.smooth_l1_loss(current_q, target_q)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if (step + 1) % 10 == 0:
        policy.q_net_target.load_state_dict(policy.q_net.state_dict())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in policy.q_net.parameters()]}
