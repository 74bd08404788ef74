# message: attempting to assign a gradient of size '[6]' to a tensor of size '[2, 3]'. Please ensure that the
#   gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 3
# trigger: federated averaging: the clients' gradients are flattened into one vector, averaged,
#   and written back into each parameter's .grad as a slice of that vector, without reshaping it
# source: none found; the pattern as users write it
# results: server
import torch
from torch import nn
import torch.nn.functional as F


def flat_gradient(model, x, y):
    model.zero_grad()
    F.mse_loss(model(x), y).backward()
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def load_flat_gradient(model, flat):
    offset = 0
    for p in model.parameters():
        n = p.numel()
        p.grad = flat[offset:offset + n]  # PRIMARY
        offset += n


torch.manual_seed(0)
server = nn.Linear(3, 2)
clients = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(3)]
optimizer = torch.optim.SGD(server.parameters(), lr=0.1)
for _ in range(2):
    average = torch.stack([flat_gradient(server, x, y) for x, y in clients]).mean(dim=0)
    load_flat_gradient(server, average)
    optimizer.step()
