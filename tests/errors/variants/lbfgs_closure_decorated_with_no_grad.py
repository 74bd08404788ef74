# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 27
# trigger: a physics-informed fit with torch.optim.LBFGS; the closure given to optimizer.step(closure) is
#   decorated with @torch.no_grad() (copied from the optimizer's own step(), which carries that
#   decorator), so the loss it builds and its backward() run with gradients off
# source: none found; the pattern as users write it (LBFGS.step is itself decorated with no_grad and
#   calls the closure under enable_grad, which the decorator on the closure undoes)
# results: losses, model
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)
t = torch.linspace(0, 1, 12).unsqueeze(1)
target = torch.sin(3 * t)


@torch.no_grad()  # PRIMARY
def closure():
    optimizer.zero_grad()
    loss = (model(t) - target).pow(2).mean()
    loss.backward()
    return loss


losses = []
for _ in range(2):
    losses.append(optimizer.step(closure).item())
