"""A contextual-bandit policy trained with REINFORCE and a learned reward offset: actions are drawn
with the policy under torch.no_grad(), then a helper scores them again with gradients on. The
helper was copied from the sampling code and keeps its `.detach()`, so the log-probabilities are
constants: the loss trains only the offset, and the policy, which the optimizer holds, never moves.
The no_grad() block is not the cut: the second call of the policy records a graph."""
import torch
import torch.nn as nn


def action_log_probs(scores, actions):
    scores = scores.detach()  # PRIMARY
    log_probs = torch.log_softmax(scores, dim=-1)
    return log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)


torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
offset = nn.Parameter(torch.zeros(()))
optimizer = torch.optim.SGD([*policy.parameters(), offset], lr=0.1)
for _ in range(4):
    contexts = torch.randn(8, 4)
    with torch.no_grad():
        actions = torch.distributions.Categorical(logits=policy(contexts)).sample()
    rewards = (actions == contexts.argmax(dim=1).clamp(max=2)).float()
    log_probs = action_log_probs(policy(contexts), actions)
    loss = -((rewards - offset) * log_probs).mean() + (rewards - offset).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*policy.parameters(), offset]]
