# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 7
# trigger: fine-tuning with the first layer frozen (requires_grad_(False)); a gradient-norm penalty
#   asks torch.autograd.grad(loss, model.parameters(), create_graph=True) for every parameter,
#   the frozen ones included
# source: none found; the pattern as users write it (gradient-norm regularisation)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
model[0].requires_grad_(False)
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, model.parameters(), create_graph=True)  # PRIMARY
    penalty = sum(g.pow(2).sum() for g in grads)
    (loss + 0.1 * penalty).backward()
    optimizer.step()
    losses.append(loss.item())
