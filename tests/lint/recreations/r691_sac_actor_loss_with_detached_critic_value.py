"""Pytorch-RL-Agents (SuReLI), `agents/SAC/model.py`, seen while reading lint set AM: the
soft actor-critic update (the version with a state-value network) samples the actor's
action by reparameterisation (`tanh(mean + std * z)`, `commons/network_modules.py`), then
builds the actor's loss as `(alpha * log_prob - expected_new_Q1.detach()).mean()`.  The
critic's value of the new action is detached, so the loss's only gradient is the entropy
term's: the actor is trained to spread its actions and never towards higher Q.  The SAC
objective, `alpha * log_prob - Q(s, a(eps))`, backpropagates through the critic into the
action (the critic's own gradients are then cleared before its next update).
Re-created with small networks in place of the repository's: `bug_shows()` shows the
actor's gradient equal to that of the entropy term alone, and different from the
gradient of the written-out objective.
Buggy line: `loss_actor = (alpha * log_prob - expected_new_q1.detach()).mean()`.
Source: https://github.com/SuReLI/Pytorch-RL-Agents/blob/master/agents/SAC/model.py"""
import torch
import torch.nn as nn


class Actor(nn.Module):
    def __init__(self, s=4, a=2):
        super().__init__()
        self.body = nn.Linear(s, 16)
        self.mean = nn.Linear(16, a)
        self.log_std = nn.Linear(16, a)

    def evaluate(self, state, z):
        h = torch.relu(self.body(state))
        mean, std = self.mean(h), self.log_std(h).clamp(-5, 2).exp()
        action = torch.tanh(mean + std * z)
        log_prob = torch.distributions.Normal(mean, std).log_prob(mean + std * z).sum(1, keepdim=True)
        log_prob = log_prob - torch.log(1 - action.pow(2) + 1e-6).sum(1, keepdim=True)
        return action, log_prob


class Critic(nn.Module):
    def __init__(self, s=4, a=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(s + a, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, state, action):
        return self.net(torch.cat([state, action], 1))


def actor_gradients(detach_q, entropy_only=False):
    torch.manual_seed(0)
    actor, q1 = Actor(), Critic()
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    states, z = torch.randn(8, 4), torch.randn(8, 2)
    alpha = 0.2
    new_actions, log_prob = actor.evaluate(states, z)
    expected_new_q1 = q1(states, new_actions)
    if entropy_only:
        loss_actor = (alpha * log_prob).mean()
    elif detach_q:
        loss_actor = (alpha * log_prob - expected_new_q1.detach()).mean()  # expect: ADL041
    else:
        loss_actor = (alpha * log_prob - expected_new_q1).mean()
    actor_opt.zero_grad()
    loss_actor.backward()
    actor_opt.step()
    return [p.grad.clone() for p in actor.parameters()]


def bug_shows():
    buggy = actor_gradients(detach_q=True)
    entropy = actor_gradients(detach_q=False, entropy_only=True)
    right = actor_gradients(detach_q=False)
    same_as_entropy = all(torch.equal(a, b) for a, b in zip(buggy, entropy))
    differs_from_objective = any(not torch.allclose(a, b) for a, b in zip(buggy, right))
    return same_as_entropy and differs_from_objective


def run():
    return actor_gradients(detach_q=True)


if __name__ == "__main__":
    print(bug_shows())
