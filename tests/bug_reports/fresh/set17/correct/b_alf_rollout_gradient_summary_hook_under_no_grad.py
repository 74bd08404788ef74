"""The gradient summary registers its hook only on tensors that require grad, so the rollout's
forward passes under `torch.no_grad()` summarise nothing.
Source: https://github.com/HorizonRobotics/alf/pull/1089."""
import torch
import torch.nn as nn

torch.manual_seed(0)

OBS, HIDDEN, ACTIONS, STEPS = 4, 32, 2, 24
gradient_norms = []


def summarize_tensor_gradients(name, tensor):
    if tensor.requires_grad:
        tensor.register_hook(lambda grad: gradient_norms.append(grad.norm().detach()))
    return tensor


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, HIDDEN), nn.Tanh())
        self.logits = nn.Linear(HIDDEN, ACTIONS)

    def forward(self, obs):
        features = summarize_tensor_gradients("policy/features", self.body(obs))
        return torch.distributions.Categorical(logits=self.logits(features))


def env_step(obs, action):
    reward = (action.float() * 2 - 1) * obs[..., 0]
    return torch.randn(OBS), reward


policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
losses = []
for iteration in range(3):
    observations, actions, rewards = [], [], []
    obs = torch.randn(OBS)
    with torch.no_grad():
        for t in range(STEPS):
            action = policy(obs).sample()
            next_obs, reward = env_step(obs, action)
            observations.append(obs)
            actions.append(action)
            rewards.append(reward)
            obs = next_obs
    returns = torch.stack(rewards).flip(0).cumsum(0).flip(0)
    log_probs = policy(torch.stack(observations)).log_prob(torch.stack(actions))
    loss = -(log_probs * (returns - returns.mean())).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "grad_norms": torch.stack(gradient_norms),
          "params": [p.detach().clone() for p in policy.parameters()]}
