"""pytorch-rl tutorial, "2 - Actor Critic [CartPole]": `update_policy`
computes `policy_loss = - (returns * log_prob_actions).sum()` and
`value_loss = F.smooth_l1_loss(returns, values).sum()`: the critic's values
never enter the policy loss, so the "actor-critic" trains the actor exactly
as REINFORCE would and the critic is fit to no purpose (no error; the author
agreed: the policy loss should use the advantage, `returns - values.detach()`).
Re-created as the notebook's update; `bug_shows()` is True when the actor's
gradient does not change when the critic's predictions change.
Buggy line: `policy_loss = - (returns * log_prob_actions).sum()` in `update_policy`.
Source: https://github.com/bentrevett/pytorch-rl/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, actor, critic):
        super().__init__()
        self.actor, self.critic = actor, critic

    def forward(self, state):
        return self.actor(state), self.critic(state)


def update_policy(returns, log_prob_actions, values, optimizer):
    returns = returns.detach()
    policy_loss = - (returns * log_prob_actions).sum()  # missed: no rule (the actor loss does not use the critic)
    value_loss = F.smooth_l1_loss(returns, values).sum()
    optimizer.zero_grad()
    policy_loss.backward()
    value_loss.backward()
    optimizer.step()
    return policy_loss.item(), value_loss.item()


def actor_grad(critic_bias):
    torch.manual_seed(0)
    policy = ActorCritic(nn.Linear(4, 2), nn.Linear(4, 1))
    with torch.no_grad():
        policy.critic.bias.fill_(critic_bias)
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.0)
    states = torch.randn(5, 4)
    logits, values = policy(states)
    dist = torch.distributions.Categorical(logits=logits)
    actions = dist.sample()
    returns = torch.tensor([3.0, 2.5, 2.0, 1.2, 0.5])
    update_policy(returns, dist.log_prob(actions), values.squeeze(-1), optimizer)
    return policy.actor.weight.grad.clone()


def bug_shows():
    return torch.allclose(actor_grad(0.0), actor_grad(5.0))
