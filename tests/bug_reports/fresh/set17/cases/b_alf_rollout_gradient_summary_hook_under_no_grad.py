"""An on-policy agent that summarises the gradient of its policy's features for monitoring: the
network's forward calls `summarize_tensor_gradients("policy/features", features)`, which
registers a hook on the tensor. The same network acts in the environment during the rollout,
under `torch.no_grad()` (the prediction phase); there `features` does not require grad and
`register_hook` raises "cannot register a hook on a tensor that doesn't require gradient".
Source: https://github.com/HorizonRobotics/alf/pull/1089 ("Improve summarize_tensor_gradients()
to handle prediction phase": "During prediction, the tensor does not require grad. There won't
be gradient for it and registering hook will cause error."; the helper now skips tensors that
do not require grad).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

OBS, HIDDEN, ACTIONS, STEPS = 4, 32, 2, 24
gradient_norms = []


def summarize_tensor_gradients(name, tensor):
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
