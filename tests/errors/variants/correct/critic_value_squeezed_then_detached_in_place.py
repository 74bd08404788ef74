# message: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel
#   (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP
#   buckets, and hence detach_() cannot be called on these gradients. To fix this issue, please use
#   detach() API or set gradient_as_bucket_view=False.
# code: AD108 (catalogue: detach_view_inplace)
# set: 11
# trigger: an actor-critic update uses the critic's value as a baseline for the policy gradient,
#   without its graph: baseline = critic(states).squeeze(-1).detach_() (squeeze makes a view)
# source: none found; the pattern as users write it (baselines cut from the graph in place to save
#   a tensor)
# results: losses, actor, critic
import torch
from torch import nn

torch.manual_seed(0)
actor = nn.Linear(3, 2)
critic = nn.Linear(3, 1)
optimizer = torch.optim.SGD(list(actor.parameters()) + list(critic.parameters()), lr=0.1)
states = torch.randn(5, 3)
actions = torch.tensor([0, 1, 1, 0, 1])
returns = torch.randn(5)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    log_probs = torch.log_softmax(actor(states), dim=-1).gather(1, actions[:, None]).squeeze(1)
    baseline = critic(states).squeeze(-1).detach()  # PRIMARY
    policy_loss = -(log_probs * (returns - baseline)).mean()
    value_loss = (critic(states).squeeze(-1) - returns).pow(2).mean()
    loss = policy_loss + value_loss
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
