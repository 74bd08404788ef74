# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [8, 1]], which is output 0 of AsStrided, is at version 2; expected
#   version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute
#   its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD103 (catalogue: saved_tensor_modified; AD103 is the recorder's code for a write made by
#   optimizer.step())
# set: 15
# trigger: a PPO-style update runs several optimisation epochs over one rollout, but the clipped
#   surrogate loss is computed once before the epoch loop and backpropagated with retain_graph=True
#   in every epoch; the first optimizer.step() writes in place the policy weights its graph saved
# source: none found; the pattern as users write it (PPO epochs over one batch of a rollout)
# results: policy, losses
import torch
from torch import nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(policy.parameters(), lr=0.01)
states = torch.randn(16, 4)
actions = torch.randn(16, 1)
advantages = torch.randn(16)
old_log_prob = torch.distributions.Normal(policy(states), 1.0).log_prob(actions).sum(-1).detach()
losses = []
for epoch in range(3):
    log_prob = torch.distributions.Normal(policy(states), 1.0).log_prob(actions).sum(-1)  # PRIMARY
    ratio = (log_prob - old_log_prob).exp()
    loss = -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
