"""Hands-on RL, chapter 10 (Actor-Critic): a reader regrouped `update()` so
that the critic is updated first and the actor second.  The critic part
kept `self.critic_optimizer.zero_grad()`, but the actor part lost
`self.actor_optimizer.zero_grad()`, so every call adds the new policy
gradient to all the previous ones before `self.actor_optimizer.step()`;
nothing raises, and the reported training curve collapses.
Source: https://github.com/boyu-ai/Hands-on-RL/issues/92"""
import torch
import torch.nn.functional as F


class PolicyNet(torch.nn.Module):
    def __init__(self, state_dim, hidden_dim, action_dim):
        super().__init__()
        self.fc1 = torch.nn.Linear(state_dim, hidden_dim)
        self.fc2 = torch.nn.Linear(hidden_dim, action_dim)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.softmax(self.fc2(x), dim=1)


class ValueNet(torch.nn.Module):
    def __init__(self, state_dim, hidden_dim):
        super().__init__()
        self.fc1 = torch.nn.Linear(state_dim, hidden_dim)
        self.fc2 = torch.nn.Linear(hidden_dim, 1)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return self.fc2(x)


class ActorCritic:
    def __init__(self, state_dim, hidden_dim, action_dim, actor_lr, critic_lr, gamma):
        self.actor = PolicyNet(state_dim, hidden_dim, action_dim)
        self.critic = ValueNet(state_dim, hidden_dim)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=actor_lr)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=critic_lr)
        self.gamma = gamma

    def update(self, transition_dict):
        states = torch.tensor(transition_dict['states'], dtype=torch.float)
        actions = torch.tensor(transition_dict['actions']).view(-1, 1)
        rewards = torch.tensor(transition_dict['rewards'], dtype=torch.float).view(-1, 1)
        next_states = torch.tensor(transition_dict['next_states'], dtype=torch.float)
        dones = torch.tensor(transition_dict['dones'], dtype=torch.float).view(-1, 1)

        # update the critic
        td_target = rewards + self.gamma * self.critic(next_states) * (1 - dones)
        critic_loss = torch.mean(F.mse_loss(self.critic(states), td_target.detach()))
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        # update the actor
        td_delta = td_target - self.critic(states)
        log_probs = torch.log(self.actor(states).gather(1, actions))
        actor_loss = torch.mean(-log_probs * td_delta.detach())
        actor_loss.backward()
        self.actor_optimizer.step()  # expect: ADL018


def bug_shows():
    torch.manual_seed(0)
    agent = ActorCritic(state_dim=4, hidden_dim=8, action_dim=2, actor_lr=0.0, critic_lr=0.0, gamma=0.98)
    batch = {'states': [[0.1, 0.2, 0.3, 0.4]], 'actions': [1], 'rewards': [1.0],
             'next_states': [[0.2, 0.1, 0.0, 0.3]], 'dones': [0.0]}
    agent.update(batch)
    first = agent.actor.fc2.weight.grad.clone()
    agent.update(batch)  # the same batch, learning rates 0: the same gradient again
    return torch.allclose(agent.actor.fc2.weight.grad, 2 * first)
