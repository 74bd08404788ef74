# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 12
# trigger: the optimizer is given the model's parameters flattened into one vector with
#   torch.nn.utils.parameters_to_vector (a new tensor computed from them, not a leaf)
# source: none found; the pattern as users write it (flat parameter vectors for optimizers)
# results: losses, model
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
flat = torch.nn.utils.parameters_to_vector(model.parameters())
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # PRIMARY
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
