"""A blog post "How To Master Simple Reliable Actor-Critic Method" (a
path-finding bot in a warehouse simulation) tells how the author's first
attempt "thought I could just pipe the gradients through both networks and
call it a day. Instead, my critic loss started oscillating wildly ... I was
updating the prediction and the target at the same time", and that
"properly handling the autograd flow is critical".  Re-created as that
first attempt: an agent with an actor and a critic behind one optimizer,
`learn()` building the TD target from `self.critic(next_state)` and summing
the actor and critic losses into one backward.  Nothing raises; the critic
is also trained to move its own target, and the actor's advantage sends
gradient into the critic.
Buggy line: `td_target = reward + self.gamma * self.critic(next_state) * (1 - done)`
(the bootstrap value not detached).
Source: https://bbioon.com/?p=895"""
import torch
import torch.nn as nn


class Agent:
    def __init__(self, n_states=6, n_actions=4, gamma=0.95, lr=1e-3):
        self.actor = nn.Sequential(nn.Linear(n_states, 32), nn.ReLU(), nn.Linear(32, n_actions))
        self.critic = nn.Sequential(nn.Linear(n_states, 32), nn.ReLU(), nn.Linear(32, 1))
        self.optimizer = torch.optim.Adam(list(self.actor.parameters()) + list(self.critic.parameters()), lr=lr)
        self.gamma = gamma

    def choose_action(self, state):
        with torch.no_grad():
            probs = torch.softmax(self.actor(state), dim=-1)
        return torch.distributions.Categorical(probs).sample()

    def losses(self, state, action, reward, next_state, done):
        value = self.critic(state).squeeze(-1)
        td_target = reward + self.gamma * self.critic(next_state).squeeze(-1) * (1 - done)
        advantage = td_target - value  # expect: ADL032
        log_probs = torch.log_softmax(self.actor(state), dim=-1)
        actor_loss = -(log_probs.gather(1, action[:, None]).squeeze(1) * advantage).mean()
        critic_loss = advantage.pow(2).mean()
        return actor_loss, critic_loss

    def learn(self, state, action, reward, next_state, done):
        actor_loss, critic_loss = self.losses(state, action, reward, next_state, done)
        self.optimizer.zero_grad()
        (actor_loss + critic_loss).backward()
        self.optimizer.step()


def bug_shows():
    """The critic's gradient differs from the one of a fixed TD target."""
    torch.manual_seed(0)
    agent = Agent()
    s, s2 = torch.randn(8, 6), torch.randn(8, 6)
    a = agent.choose_action(s)
    r, done = torch.randn(8), torch.zeros(8)
    actor_loss, critic_loss = agent.losses(s, a, r, s2, done)
    got = torch.autograd.grad(critic_loss, list(agent.critic.parameters()))
    value = agent.critic(s).squeeze(-1)
    with torch.no_grad():
        target = r + agent.gamma * agent.critic(s2).squeeze(-1) * (1 - done)
    want = torch.autograd.grad((target - value).pow(2).mean(), list(agent.critic.parameters()))
    return any(not torch.allclose(g, w) for g, w in zip(got, want))
