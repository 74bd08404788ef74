"""Deep_Reinforcement_Learning_SUT, CA01 `agents/ca1_agents.py`, `ActorCriticAgent.learn`: a
one-step actor-critic.  The critic's target is `td_target = reward_t + self.gamma * next_value
* (1 - done_t)` with `next_value = self.critic(next_state_t)` left in the graph, and the critic
minimises `td_error.pow(2).mean()` with `td_error = td_target - current_value`.  The critic's
gradient therefore also pushes `V(next_state)` towards `V(state)`: a residual gradient, not the
TD(0) update the assignment asks for (the actor's `td_error.detach()` shows the intent, and the
course's other actor-critics detach the target).
Re-created in my own words with the module's structure: `PolicyNetwork` (softmax) and
`ValueNetwork`, `ActorCriticAgent` with `act` (returns the action and `m.log_prob(action)`) and
`learn(state, action, reward, next_state, done, log_prob)`, on a small stand-in environment.
Nothing raises: `bug_shows()` compares the critic's gradient in one `learn` with the TD(0)
gradient of the same step (target detached); they differ.
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/Solutions/CA01_Deep_RL_Fundamentals/agents/ca1_agents.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

device = torch.device("cpu")


class PolicyNetwork(nn.Module):
    def __init__(self, state_size, action_size, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(state_size, hidden)
        self.fc2 = nn.Linear(hidden, action_size)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)


class ValueNetwork(nn.Module):
    def __init__(self, state_size, hidden=32):
        super().__init__()
        self.fc1 = nn.Linear(state_size, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class ActorCriticAgent:
    def __init__(self, state_size, action_size, lr_actor=1e-3, lr_critic=1e-3, gamma=0.99):
        self.gamma = gamma
        self.actor = PolicyNetwork(state_size, action_size).to(device)
        self.actor_optimizer = optim.Adam(self.actor.parameters(), lr=lr_actor)
        self.critic = ValueNetwork(state_size).to(device)
        self.critic_optimizer = optim.Adam(self.critic.parameters(), lr=lr_critic)

    def act(self, state):
        state = torch.from_numpy(state).float().unsqueeze(0).to(device)
        probs = self.actor(state)
        m = torch.distributions.Categorical(probs)
        action = m.sample()
        return action.item(), m.log_prob(action)

    def learn(self, state, action, reward, next_state, done, log_prob):
        state_t = torch.from_numpy(state).float().unsqueeze(0).to(device)
        next_state_t = torch.from_numpy(next_state).float().unsqueeze(0).to(device)
        reward_t = torch.tensor([reward]).float().to(device)
        done_t = torch.tensor([done]).float().to(device)

        current_value = self.critic(state_t)
        next_value = self.critic(next_state_t) if not done else torch.zeros_like(current_value).to(device)

        td_target = reward_t + self.gamma * next_value * (1 - done_t)
        td_error = td_target - current_value  # expect: ADL032

        critic_loss = td_error.pow(2).mean()

        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()

        actor_loss = (-log_prob * td_error.detach()).mean()

        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()

        return float(actor_loss.item()), float(critic_loss.item())


def bug_shows():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    agent = ActorCriticAgent(4, 2)
    state = rng.normal(size=4).astype(np.float32)
    next_state = rng.normal(size=4).astype(np.float32)
    action, log_prob = agent.act(state)

    s = torch.from_numpy(state).unsqueeze(0)
    s2 = torch.from_numpy(next_state).unsqueeze(0)
    agent.critic.zero_grad()
    td_zero = (1.0 + agent.gamma * agent.critic(s2).detach() - agent.critic(s)).pow(2).mean()
    td_zero.backward()
    expected = [p.grad.clone() for p in agent.critic.parameters()]

    agent.critic_optimizer.step = lambda: None  # keep the weights to read the gradient
    agent.learn(state, action, 1.0, next_state, False, log_prob)
    got = [p.grad for p in agent.critic.parameters()]
    return not all(torch.allclose(e, g) for e, g in zip(expected, got))
