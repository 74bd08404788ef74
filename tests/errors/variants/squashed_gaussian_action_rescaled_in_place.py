# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [6, 2]], which is output 0 of Mul, is at version 1; expected
#   version 0 instead. Hint: enable anomaly detection to find the operation that failed to compute its
#   gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD101 (catalogue: saved_tensor_modified)
# set: 16
# trigger: a SAC-style squashed Gaussian policy samples with torch.distributions.Normal.rsample(),
#   squashes with tanh, then rescales the action to the environment's bounds in place
#   (action *= self.max_action); tanh saved its output for backward
# source: none found; the pattern as users write it (soft actor-critic policies)
# results: policy, losses
import torch
from torch import nn
from torch.distributions import Normal


class SquashedGaussianPolicy(nn.Module):
    def __init__(self, max_action):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.max_action = max_action

    def forward(self, state):
        mean, log_std = self.body(state).chunk(2, -1)
        dist = Normal(mean, log_std.clamp(-5, 2).exp())
        u = dist.rsample()
        action = torch.tanh(u)
        log_prob = (dist.log_prob(u) - torch.log(1 - action.pow(2) + 1e-6)).sum(-1)
        action *= self.max_action  # PRIMARY
        return action, log_prob


torch.manual_seed(0)
policy = SquashedGaussianPolicy(2.0)
optimizer = torch.optim.SGD(policy.parameters(), lr=0.05)
losses = []
for _ in range(3):
    action, log_prob = policy(torch.randn(6, 3))
    loss = (0.2 * log_prob - action.sum(-1)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
