# message: `inputs` argument to `grad()` cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 3
# trigger: the trainable parameters are taken with filter(lambda p: p.requires_grad, ...), an
#   iterator that the optimizer consumes; autograd.grad of the loss gets what is left of it
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
model[0].requires_grad_(False)
trainable = filter(lambda p: p.requires_grad, model.parameters())  # PRIMARY
optimizer = torch.optim.SGD(trainable, lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, trainable)
    for p, g in zip(optimizer.param_groups[0]["params"], grads):
        p.grad = g.clamp(-1.0, 1.0)
    optimizer.step()
    losses.append(loss.item())
