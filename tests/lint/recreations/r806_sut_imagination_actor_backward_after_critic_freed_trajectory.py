"""Deep_Reinforcement_Learning_SUT, CA11 notebook, the imagination actor-critic (a Dreamer-like
agent on a learned world model): `imagine_trajectories` rolls the actor through the world
model's `dynamics` and `reward_model`, keeping `states`, `actions`, `rewards`, `log_probs`,
`values = critic(state)` and `final_value = self.critic(states[-1])` with their graphs.
`update_actor_critic` first minimises `critic_loss = F.mse_loss(self.critic(states), returns)`
(the returns, built from the imagined rewards and `final_value`, are not detached) and calls
`critic_loss.backward()`, which goes back through the imagined states and rewards into the
actor and the world model and frees that graph.  The actor's update then evaluates
`self.actor(states)` and `torch.atanh(... actions ...)` on the same imagined tensors and calls
`actor_loss.backward()`, which needs the freed graph again.  (Had it run, the critic's
undetached target would also have moved its own bootstrap value and the world model.)
Re-created in my own words with the notebook's structure: a small `WorldModel` (deterministic
`dynamics`, `reward_model`), `LatentActor.sample` (tanh-squashed Gaussian), `LatentCritic`, and
the agent's `imagine_trajectories`, `compute_returns_and_advantages` and `update_actor_critic`.
Raises at `actor_loss.backward()` ("Trying to backward through the graph a second time").
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/No%20Answer/CA11.ipynb"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Normal


class WorldModel(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.dynamics_net = nn.Linear(state_dim + action_dim, state_dim)
        self.reward_net = nn.Linear(state_dim + action_dim, 1)

    def dynamics(self, state, action):
        return torch.tanh(self.dynamics_net(torch.cat([state, action], dim=-1)))

    def reward_model(self, state, action):
        return self.reward_net(torch.cat([state, action], dim=-1)).squeeze(-1)


class LatentActor(nn.Module):
    def __init__(self, state_dim, action_dim, action_range=1.0):
        super().__init__()
        self.action_range = action_range
        self.net = nn.Sequential(nn.Linear(state_dim, 32), nn.ELU())
        self.mean = nn.Linear(32, action_dim)
        self.log_std = nn.Linear(32, action_dim)

    def forward(self, state):
        h = self.net(state)
        return self.mean(h), self.log_std(h).clamp(-5, 2).exp()

    def sample(self, state):
        mean, std = self(state)
        dist = Normal(mean, std)
        raw = dist.rsample()
        action = torch.tanh(raw) * self.action_range
        log_prob = dist.log_prob(raw).sum(-1) - (2 * (np.log(2) - raw - F.softplus(-2 * raw))).sum(-1)
        return action, log_prob


class LatentCritic(nn.Module):
    def __init__(self, state_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 32), nn.ELU(), nn.Linear(32, 1))

    def forward(self, state):
        return self.net(state).squeeze(-1)


class ImaginationAgent:
    def __init__(self, world_model, state_dim, action_dim, actor_lr=1e-4, critic_lr=1e-3, gamma=0.99,
                 lambda_=0.95, imagination_horizon=5):
        self.world_model = world_model
        self.gamma = gamma
        self.lambda_ = lambda_
        self.imagination_horizon = imagination_horizon
        self.actor = LatentActor(state_dim, action_dim)
        self.critic = LatentCritic(state_dim)
        self.actor_optimizer = optim.Adam(self.actor.parameters(), lr=actor_lr)
        self.critic_optimizer = optim.Adam(self.critic.parameters(), lr=critic_lr)

    def imagine_trajectories(self, initial_states):
        states = [initial_states]
        actions, rewards, log_probs, values = [], [], [], []
        current_state = initial_states
        for t in range(self.imagination_horizon):
            action, log_prob = self.actor.sample(current_state)
            value = self.critic(current_state)
            actions.append(action)
            log_probs.append(log_prob)
            values.append(value)
            next_state = self.world_model.dynamics(current_state, action)
            reward = self.world_model.reward_model(current_state, action)
            states.append(next_state)
            rewards.append(reward)
            current_state = next_state
        states = torch.stack(states[:-1])
        final_value = self.critic(states[-1])
        return {"states": states, "actions": torch.stack(actions), "rewards": torch.stack(rewards),
                "log_probs": torch.stack(log_probs), "values": torch.stack(values), "final_value": final_value}

    def compute_returns_and_advantages(self, trajectory):
        rewards = trajectory["rewards"]
        values = trajectory["values"]
        final_value = trajectory["final_value"]
        returns = torch.zeros_like(rewards)
        advantages = torch.zeros_like(rewards)
        last_return = final_value
        last_advantage = 0
        for t in reversed(range(len(rewards))):
            returns[t] = rewards[t] + self.gamma * last_return
            delta = rewards[t] + self.gamma * (final_value if t == len(rewards) - 1 else values[t + 1]) - values[t]
            advantages[t] = delta + self.gamma * self.lambda_ * last_advantage
            last_return = returns[t]
            last_advantage = advantages[t]
        return returns, advantages

    def update_actor_critic(self, trajectory):
        states = trajectory["states"]
        actions = trajectory["actions"]
        states = states.view(-1, states.shape[-1])
        actions = actions.view(-1, actions.shape[-1])
        returns, advantages = self.compute_returns_and_advantages(trajectory)
        returns = returns.view(-1)
        advantages = advantages.view(-1)
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        self.critic_optimizer.zero_grad()
        values_pred = self.critic(states)
        critic_loss = F.mse_loss(values_pred, returns)
        critic_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.critic.parameters(), 10.0)
        self.critic_optimizer.step()

        self.actor_optimizer.zero_grad()
        action_mean, action_std = self.actor(states)
        dist = Normal(action_mean, action_std)
        raw_actions = torch.atanh(torch.clamp(actions / self.actor.action_range, -0.999, 0.999))
        new_log_probs = dist.log_prob(raw_actions).sum(dim=-1)
        actor_loss = -(new_log_probs * advantages.detach()).mean() - 0.001 * dist.entropy().sum(-1).mean()
        actor_loss.backward()  # missed: ADL019 across methods: the imagined trajectory's graph, freed by critic_loss.backward()
        self.actor_optimizer.step()
        return {"actor_loss": actor_loss.item(), "critic_loss": critic_loss.item()}


def run():
    torch.manual_seed(0)
    agent = ImaginationAgent(WorldModel(4, 2), 4, 2)
    trajectory = agent.imagine_trajectories(torch.randn(3, 4))
    agent.update_actor_critic(trajectory)
