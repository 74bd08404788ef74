# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 30
# trigger: a MoCo-like contrastive module computes the keys with its momentum encoder outside
#   torch.no_grad(), puts them in front of its negatives queue with torch.cat and truncates the queue to
#   its length with resize_(); the keys carry a graph, so the new queue requires grad
# source: none found; the pattern as users write it (a key encoder called like the query encoder)
# results: losses, model
import torch
from torch import nn


class MomentumContrast(nn.Module):
    def __init__(self, features=6, dim=4, queue_length=8, momentum=0.9, temperature=0.2):
        super().__init__()
        self.query_encoder = nn.Linear(features, dim)
        self.key_encoder = nn.Linear(features, dim)
        self.key_encoder.load_state_dict(self.query_encoder.state_dict())
        self.key_encoder.requires_grad_(False)
        self.queue_length = queue_length
        self.momentum = momentum
        self.temperature = temperature
        self.register_buffer("queue", nn.functional.normalize(torch.randn(queue_length, dim), dim=1))

    def forward(self, view_a, view_b):
        queries = nn.functional.normalize(self.query_encoder(view_a), dim=1)
        for q_param, k_param in zip(self.query_encoder.parameters(), self.key_encoder.parameters()):
            k_param.data.mul_(self.momentum).add_(q_param.data, alpha=1 - self.momentum)
        with torch.no_grad():  # PRIMARY
            keys = nn.functional.normalize(self.key_encoder(view_b), dim=1)
        positives = (queries * keys).sum(1, keepdim=True)
        negatives = queries @ self.queue.t()
        logits = torch.cat([positives, negatives], dim=1) / self.temperature
        self.queue = torch.cat([keys, self.queue])
        self.queue.resize_(self.queue_length, self.queue.size(1))
        return nn.functional.cross_entropy(logits, torch.zeros(len(logits), dtype=torch.long))


torch.manual_seed(0)
model = MomentumContrast()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(3):
    batch = torch.randn(3, 6)
    optimizer.zero_grad()
    loss = model(batch + 0.1 * torch.randn(3, 6), batch + 0.1 * torch.randn(3, 6))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
