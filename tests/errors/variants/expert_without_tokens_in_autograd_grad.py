# message: The differentiated Tensor at index 4 appears to not have been used in the graph. Set
#   allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# set: 11
# trigger: a mixture of experts routes each example by a fixed rule on its first feature; a
#   hand-written SGD step takes torch.autograd.grad of the loss for every parameter, and in this
#   batch no example is routed to the last expert, so its parameters are not in the graph
# source: none found; the pattern as users write it (data-dependent routing with manual updates)
# results: losses, model
import torch
from torch import nn


class MixtureOfExperts(nn.Module):
    def __init__(self):
        super().__init__()
        self.experts = nn.ModuleList(nn.Linear(3, 1) for _ in range(3))

    def forward(self, x):
        route = torch.bucketize(x[:, 0], torch.tensor([-0.5, 0.5]))
        out = x.new_zeros(len(x), 1)
        for index, expert in enumerate(self.experts):
            rows = route == index
            if rows.any():
                out[rows] = expert(x[rows])
        return out


torch.manual_seed(0)
model = MixtureOfExperts()
x = torch.randn(6, 3)
x[:, 0] = torch.tensor([-1.0, -0.8, 0.1, 0.2, -0.1, -2.0])
y = torch.randn(6, 1)
losses = []
for _ in range(2):
    loss = (model(x) - y).pow(2).mean()
    gradients = torch.autograd.grad(loss, list(model.parameters()))  # PRIMARY
    with torch.no_grad():
        for parameter, gradient in zip(model.parameters(), gradients):
            parameter -= 0.1 * gradient
    losses.append(loss.item())
