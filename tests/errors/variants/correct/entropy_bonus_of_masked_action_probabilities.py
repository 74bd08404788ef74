# message: Function 'LogBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# set: 13
# trigger: a policy masks illegal actions with -inf before the softmax, and its entropy bonus is
#   written as -(probs * probs.log()).sum(); the masked probabilities are exactly 0, and log's backward
#   divides by them, under torch.autograd.set_detect_anomaly(True)
# source: none found; the pattern as users write it (invalid-action masking with an entropy bonus)
# results: policy, losses
import torch
from torch import nn

torch.autograd.set_detect_anomaly(True)


class MaskedPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.logits = nn.Linear(3, 4)

    def forward(self, observation, legal):
        return torch.softmax(self.logits(observation).masked_fill(~legal, float("-inf")), dim=-1)


torch.manual_seed(0)
policy = MaskedPolicy()
optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
observation = torch.randn(5, 3)
legal = torch.tensor([[True, True, False, True]] * 5)
actions, advantages = torch.tensor([0, 1, 3, 0, 1]), torch.randn(5)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    probs = policy(observation, legal)
    chosen = probs[torch.arange(5), actions]
    entropy = -(probs * probs.clamp_min(1e-12).log()).sum(dim=-1).mean()  # PRIMARY
    loss = -(advantages * chosen.log()).mean() - 0.01 * entropy
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
