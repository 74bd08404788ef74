"""DQN: the target network is synchronised with `load_state_dict`, and then the name is rebound to
the online network (`target_net = online_net`), so from then on the TD targets move with every
update (no error; the target network no longer exists).
Source: https://github.com/andri27-ts/Reinforcement-Learning/issues/14 (the reference should not be
rebound; loading the state dict is the synchronisation).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
online_net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
target_net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(online_net.parameters(), lr=0.1)
states, next_states = torch.randn(5, 8, 3), torch.randn(5, 8, 3)
actions, rewards = torch.randint(0, 2, (5, 8)), torch.randn(5, 8)
gamma = 0.9


def update_target():
    global target_net
    target_net.load_state_dict(online_net.state_dict())
    target_net = online_net


update_target()
losses = []
for step in range(5):
    q = online_net(states[step]).gather(1, actions[step].unsqueeze(1)).squeeze(1)
    with torch.no_grad():
        target = rewards[step] + gamma * target_net(next_states[step]).max(1)[0]
    loss = (q - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in online_net.parameters()]}
