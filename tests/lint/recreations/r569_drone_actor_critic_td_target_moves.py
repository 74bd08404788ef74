"""A blog series on deep reinforcement learning for a drone-landing task
describes, in its actor-critic part, "the moving target problem": "Without
detaching gradients from the next state value, the critic was trying to
optimize both its prediction and the target simultaneously ... The fix was
simple: wrap the next value computation in torch.no_grad()".  Re-created as
the post's agent: a Gaussian actor and a state-value critic, each with its
own optimizer, updated after every step from the TD error.  Nothing raises;
the critic's gradient also pushes V(s') toward V(s) (a full gradient, not
the semi-gradient TD update).
Buggy line: `next_value = self.critic(next_state)` (not under `no_grad`).
Source: https://hyper.ai/en/stories/9db0dad9fb59e85ebd56f69fbe1b5484"""
import torch
import torch.nn as nn


class Actor(nn.Module):
    def __init__(self, state_dim=4, action_dim=2):
        super().__init__()
        self.mu = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, action_dim))
        self.log_std = nn.Parameter(torch.zeros(action_dim))

    def dist(self, state):
        return torch.distributions.Normal(self.mu(state), self.log_std.exp())


class Critic(nn.Module):
    def __init__(self, state_dim=4):
        super().__init__()
        self.v = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, state):
        return self.v(state).squeeze(-1)


class ActorCriticAgent:
    def __init__(self, gamma=0.99):
        self.actor = Actor()
        self.critic = Critic()
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.gamma = gamma

    def act(self, state):
        with torch.no_grad():
            return self.actor.dist(state).sample()

    def critic_loss(self, state, reward, next_state, done):
        value = self.critic(state)
        next_value = self.critic(next_state)
        td_target = reward + self.gamma * next_value * (1 - done)
        td_error = td_target - value  # expect: ADL032
        return td_error.pow(2).mean(), td_error

    def update(self, state, action, reward, next_state, done):
        critic_loss, td_error = self.critic_loss(state, reward, next_state, done)
        self.critic_opt.zero_grad()
        critic_loss.backward()
        self.critic_opt.step()

        log_prob = self.actor.dist(state).log_prob(action).sum(-1)
        actor_loss = -(log_prob * td_error.detach()).mean()
        self.actor_opt.zero_grad()
        actor_loss.backward()
        self.actor_opt.step()


def bug_shows():
    """The critic's gradient differs from the TD (semi-gradient) update."""
    torch.manual_seed(0)
    agent = ActorCriticAgent()
    s, s2 = torch.randn(8, 4), torch.randn(8, 4)
    r, done = torch.randn(8), torch.zeros(8)
    loss, _ = agent.critic_loss(s, r, s2, done)
    got = torch.autograd.grad(loss, list(agent.critic.parameters()))
    value = agent.critic(s)
    with torch.no_grad():
        target = r + agent.gamma * agent.critic(s2) * (1 - done)
    want = torch.autograd.grad((target - value).pow(2).mean(), list(agent.critic.parameters()))
    return any(not torch.allclose(g, w) for g, w in zip(got, want))
