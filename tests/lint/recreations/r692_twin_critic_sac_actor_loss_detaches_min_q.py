"""A twin-critic soft actor-critic agent (`update()` of a `SAC` class in a public
`rl_algorithms/PyTorch` package, found by the project's code search; stored file id
19377016403, the index does not name its repository): after the two critic updates the
agent samples a fresh action from its actor (`pi, log_pi, _ = self.actor.sample(states)`,
a reparameterised sample), evaluates it with both critics, takes `torch.min` of the two
values and writes the actor's loss as `((alpha * log_pi) - min_qf_pi.detach()).mean()`.
The detach cuts the only path from the loss into the actor through the critics: the actor
is trained on the entropy term alone and never towards higher Q.
Re-created in my own words with small networks (a squashed Gaussian actor, two critics);
`bug_shows()` shows the actor's gradient equal to that of the entropy term alone and
different from the gradient of the written-out SAC objective `alpha * log_pi - min(Q1, Q2)`.
Buggy line: `actor_loss = ((self.alpha * log_pi) - min_qf_pi.detach()).mean()`.
Source: https://github.com/search?q=%22min_qf_pi.detach()%29.mean()%22&type=code (the public
file as the project's code index stores it, id 19377016403; the index does not name its
repository, so no direct link can be given)."""
import torch
import torch.nn as nn


class SquashedActor(nn.Module):
    def __init__(self, s=3, a=2):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(s, 12), nn.Tanh())
        self.mu = nn.Linear(12, a)
        self.log_sigma = nn.Linear(12, a)

    def sample(self, states, eps):
        h = self.trunk(states)
        mu, sigma = self.mu(h), self.log_sigma(h).clamp(-4, 1).exp()
        raw = mu + sigma * eps
        squashed = torch.tanh(raw)
        logp = torch.distributions.Normal(mu, sigma).log_prob(raw).sum(-1, keepdim=True)
        logp = logp - torch.log(1 - squashed.pow(2) + 1e-6).sum(-1, keepdim=True)
        return squashed, logp, torch.tanh(mu)


class QNet(nn.Module):
    def __init__(self, s=3, a=2):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(s + a, 12), nn.ReLU(), nn.Linear(12, 1))

    def forward(self, states, actions):
        return self.body(torch.cat([states, actions], -1))


class Agent:
    def __init__(self, mode):
        torch.manual_seed(1)
        self.actor, self.critic, self.critic2 = SquashedActor(), QNet(), QNet()
        self.actor_optimizer = torch.optim.SGD(self.actor.parameters(), lr=0.1)
        self.alpha = 0.1
        self.mode = mode

    def update(self, states, eps):
        pi, log_pi, _ = self.actor.sample(states, eps)
        qf1_pi = self.critic(states, pi)
        qf2_pi = self.critic2(states, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        if self.mode == "bug":
            actor_loss = ((self.alpha * log_pi) - min_qf_pi.detach()).mean()  # expect: ADL041
        elif self.mode == "entropy":
            actor_loss = (self.alpha * log_pi).mean()
        else:
            actor_loss = ((self.alpha * log_pi) - min_qf_pi).mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        grads = [p.grad.clone() for p in self.actor.parameters()]
        self.actor_optimizer.step()
        return grads


def gradients(mode):
    torch.manual_seed(5)
    states, eps = torch.randn(6, 3), torch.randn(6, 2)
    return Agent(mode).update(states, eps)


def bug_shows():
    bug, entropy, right = gradients("bug"), gradients("entropy"), gradients("right")
    return all(torch.equal(a, b) for a, b in zip(bug, entropy)) and \
        any(not torch.allclose(a, b) for a, b in zip(bug, right))


def run():
    return gradients("bug")


if __name__ == "__main__":
    print(bug_shows())
