"""A-GEM flattens zeros for a parameter whose gradient is None (a head the batch did not use),
as the maintainers' fix does.
Source: https://github.com/ContinualAI/avalanche/pull/791."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(16, 3), nn.Linear(16, 3)])

    def forward(self, x, task):
        return self.heads[task](self.trunk(x))


def flat_gradient(model):
    return torch.cat([p.grad.view(-1) if p.grad is not None else torch.zeros(p.numel())
                      for p in model.parameters()])


model = MultiHeadNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
memory_x, memory_y = torch.randn(6, 8), torch.randint(0, 3, (6,))
task_batches = [(torch.randn(6, 8), torch.randint(0, 3, (6,))) for _ in range(4)]

losses = []
for x, y in task_batches:
    optimizer.zero_grad()
    F.cross_entropy(model(memory_x, 0), memory_y).backward()
    reference = flat_gradient(model)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x, 1), y)
    loss.backward()
    current = flat_gradient(model)
    dot = torch.dot(current, reference)
    if dot < 0:
        projected = current - dot / torch.dot(reference, reference) * reference
        offset = 0
        for p in model.parameters():
            if p.grad is not None:
                p.grad.copy_(projected[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
