"""DeepONet for Burgers with the trunk's periodic features built out of place (`x = x * 2 * np.pi`).
Source: https://github.com/lu-group/deeponet-fno/issues/4"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)

SENSORS, GRID, FUNCTIONS, WIDTH = 16, 12, 8, 32


def periodic(x):
    x = x * 2 * np.pi
    return torch.cat([torch.cos(x), torch.sin(x), torch.cos(2 * x), torch.sin(2 * x)], 1)


def mlp(sizes):
    layers = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(n_in, n_out), nn.Tanh()]
    return nn.Sequential(*layers[:-1])


class DeepONetCartesianProd(nn.Module):
    def __init__(self, layer_sizes_branch, layer_sizes_trunk):
        super().__init__()
        self.branch = mlp(layer_sizes_branch)
        self.trunk = mlp(layer_sizes_trunk)
        self.b = nn.Parameter(torch.tensor(0.0))
        self._input_transform = None

    def apply_feature_transform(self, transform):
        self._input_transform = transform

    def forward(self, inputs):
        x_func, x_loc = inputs
        x_func = self.branch(x_func)
        if self._input_transform is not None:
            x_loc = self._input_transform(x_loc)
        x_loc = torch.tanh(self.trunk(x_loc))
        return torch.einsum("bi,ni->bn", x_func, x_loc) + self.b


grid = np.linspace(0, 1, num=GRID, dtype=np.float32)[:, None]
x_branch = np.random.randn(FUNCTIONS, SENSORS).astype(np.float32)
y_train = np.sin(2 * np.pi * grid.T) * x_branch[:, :1] + 0.1 * x_branch[:, 1:2]

net = DeepONetCartesianProd([SENSORS, WIDTH, WIDTH], [4, WIDTH, WIDTH])
net.apply_feature_transform(periodic)
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)

losses = []
for step in range(5):
    # DeepXDE's PyTorch backend: every input becomes a tensor that requires grad.
    inputs = tuple(torch.as_tensor(x).requires_grad_() for x in (x_branch, grid))
    outputs = net(inputs)
    loss = torch.mean((outputs - torch.as_tensor(y_train)) ** 2)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]}
