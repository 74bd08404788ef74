# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_list_of_losses)
# set: 14
# trigger: gradient accumulation over micro-batches: the micro-batch losses are kept in a list and
#   averaged with np.mean before one backward(), as the same code logs its metrics
# source: none found; the pattern as users write it (np.mean over a list of losses)
# results: model, losses
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
micro_batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
losses = []
for _ in range(2):
    optimizer.zero_grad()
    micro_losses = [nn.functional.mse_loss(model(x), y) for x, y in micro_batches]
    loss = torch.stack(micro_losses).mean()  # PRIMARY
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
