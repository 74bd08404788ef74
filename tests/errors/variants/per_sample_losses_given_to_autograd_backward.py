# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# set: 8
# trigger: the loss is a functools.partial of F.smooth_l1_loss with reduction="none" (the trainer
#   logs the per-sample losses to find hard examples); the step then calls
#   torch.autograd.backward(loss) on the per-sample vector
# source: none found; the pattern as users write it
# results: hardest, model
import functools

import torch
from torch import nn
import torch.nn.functional as F

criterion = functools.partial(F.smooth_l1_loss, reduction="none", beta=0.5)

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hardest = []
for _ in range(2):
    x, y = torch.randn(6, 3), torch.randn(6)
    optimizer.zero_grad()
    loss = criterion(model(x).squeeze(-1), y)
    hardest.append(int(loss.detach().argmax()))
    torch.autograd.backward(loss)  # PRIMARY
    optimizer.step()
