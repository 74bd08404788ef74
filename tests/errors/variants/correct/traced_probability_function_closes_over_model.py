# message: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter
#   or input, or detaching the gradient
# code: AD143 (catalogue: trace_constant_requires_grad)
# set: 5
# trigger: a plain function that calls a module held in a global (model(batch).squeeze(1)) is
#   traced with torch.jit.trace, so the module's parameters would become constants; the traced
#   function is then trained
# source: https://github.com/pytorch/pytorch/issues/20101 (tracing a module through a function)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))


def logits_of(batch):
    return model(batch).squeeze(1)


images, targets = torch.randn(5, 4), torch.tensor([1.0, 0.0, 1.0, 1.0, 0.0])
traced_model = torch.jit.trace(model, images)  # PRIMARY


def traced(batch):
    return traced_model(batch).squeeze(1)


optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(traced(images), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
