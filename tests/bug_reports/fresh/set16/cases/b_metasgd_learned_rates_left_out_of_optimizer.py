"""Meta-SGD on a family of reinforcement-learning tasks (a Gaussian policy on contextual bandits
whose best action differs per task): a `MetaSGD` wrapper holds the policy and one learned
inner-loop learning rate per parameter (`self.lrs`). Each task adapts the policy with one step
`p - lr * grad` (create_graph=True), and the adapted policy's loss on fresh samples is the
meta-loss. The meta-optimizer is built from `policy.parameters()`: the learned rates receive a
gradient through the adapted parameters at every meta-backward(), but no optimizer holds them,
so the per-parameter learning rates never leave their initial value. Nothing is raised.
Source: https://github.com/learnables/learn2learn/issues/167 ("Learning rate alpha not
changing"; the fix, PR #168, builds the optimizer from `meta_learner.parameters()`).
expect: silent"""
import torch
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)

STATE, TASKS, SAMPLES, INNER_LR, META_LR = 3, 4, 32, 0.1, 1e-2


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.mean = nn.Linear(STATE, 1)
        self.log_std = nn.Parameter(torch.full((1,), -0.5))

    def forward(self, states):
        return torch.distributions.Normal(self.mean(states).squeeze(-1), self.log_std.exp())


class MetaSGD(nn.Module):
    def __init__(self, module, lr):
        super().__init__()
        self.module = module
        self.lrs = nn.ParameterList([nn.Parameter(torch.full_like(p, lr)) for p in module.parameters()])

    def adapt(self, loss):
        names, params = zip(*self.module.named_parameters())
        grads = torch.autograd.grad(loss, params, create_graph=True)
        return {n: p - lr * g for n, p, lr, g in zip(names, params, self.lrs, grads)}


def policy_gradient_loss(policy, params, states, goal):
    dist = functional_call(policy, params, (states,))
    actions = dist.sample()
    rewards = -(actions - goal) ** 2
    advantages = rewards - rewards.mean()
    return -(dist.log_prob(actions) * advantages).mean()


policy = GaussianPolicy()
meta_learner = MetaSGD(policy, lr=INNER_LR)
opt = torch.optim.Adam(policy.parameters(), lr=META_LR)
goals = torch.randn(TASKS)
meta_losses = []
for iteration in range(5):
    opt.zero_grad()
    meta_loss = 0.0
    for task in range(TASKS):
        states = torch.randn(SAMPLES, STATE)
        own = dict(policy.named_parameters())
        adapted = meta_learner.adapt(policy_gradient_loss(policy, own, states, goals[task]))
        meta_loss = meta_loss + policy_gradient_loss(policy, adapted, torch.randn(SAMPLES, STATE), goals[task])
    (meta_loss / TASKS).backward()
    opt.step()
    meta_losses.append(meta_loss.detach())

result = {"meta_losses": torch.stack(meta_losses),
          "params": [p.detach().clone() for p in meta_learner.parameters()]}
