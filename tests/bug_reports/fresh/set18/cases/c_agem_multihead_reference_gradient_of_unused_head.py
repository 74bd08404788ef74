"""A-GEM (averaged gradient episodic memory) on a multi-head continual-learning model: before
each step, the gradient of a replayed memory batch is the reference, and the current gradient
is projected when it points against it. The model has one classification head per task; the
memory batch comes from task 0 and runs through head 0, the current batch from task 1 through
head 1. The gradients are flattened with `p.grad.view(-1)` for every parameter, but head 1 took
no part in the memory loss, so its `.grad` is None: "AttributeError: 'NoneType' object has no
attribute 'view'".
Source: https://github.com/ContinualAI/avalanche/pull/791 ("Fix AGEM by setting to zero
multi-head reference gradient for unused heads"; #790: "Multi-headed models have gradient None
for heads not used"): the fix flattens zeros for a parameter whose gradient is None.
expect: raises"""
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
    return torch.cat([p.grad.view(-1) for p in model.parameters()])


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
