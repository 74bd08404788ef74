"""Spatio-temporal GCN (PyTorch Geometric Temporal's STConv): after the first temporal convolution,
the block runs the graph convolution on every (batch, time) snapshot and writes the result back
into the same tensor, `T[b][t] = self._graph_conv(T[b][t], ...)`. The graph convolution saved its
input snapshot for backward; the next writes into `T` change it, and backward fails.
Source: https://github.com/benedekrozemberczki/pytorch_geometric_temporal/issues/57 ("... output 0
of SelectBackward, is at version 60; expected version 59"; fixed in the library: the temporal
convolution's output is kept as `T_0` and the graph convolution's results are written into a new
`T = torch.zeros_like(T_0)`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
BATCH, STEPS, NODES, CHANNELS = 2, 6, 5, 4


class ChebConv(nn.Module):
    """Chebyshev graph convolution with K = 2: lin_0(x) + lin_1(L x)."""

    def __init__(self, channels):
        super().__init__()
        self.lin_0 = nn.Linear(channels, channels)
        self.lin_1 = nn.Linear(channels, channels, bias=False)

    def forward(self, x, laplacian):
        return self.lin_0(x) + self.lin_1(laplacian @ x)


class STConvBlock(nn.Module):
    def __init__(self, channels, kernel_size=3):
        super().__init__()
        self._temporal_conv1 = nn.Conv2d(channels, channels, (kernel_size, 1), padding=(1, 0))
        self._graph_conv = ChebConv(channels)
        self._temporal_conv2 = nn.Conv2d(channels, channels, (kernel_size, 1), padding=(1, 0))

    def temporal(self, conv, X):
        return conv(X.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)

    def forward(self, X, adjacency):
        T = self.temporal(self._temporal_conv1, X)
        for b in range(T.size(0)):
            for t in range(T.size(1)):
                T[b][t] = self._graph_conv(T[b][t], adjacency)
        T = F.relu(T)
        return self.temporal(self._temporal_conv2, T)


block = STConvBlock(CHANNELS)
head = nn.Linear(CHANNELS, 1)
optimizer = torch.optim.Adam(list(block.parameters()) + list(head.parameters()), lr=1e-2)
adjacency = torch.softmax(torch.randn(NODES, NODES), dim=1)
losses = []
for step in range(3):
    X = torch.randn(BATCH, STEPS, NODES, CHANNELS)
    target = X.mean(dim=3, keepdim=True).roll(1, dims=1)
    loss = F.mse_loss(head(block(X, adjacency)), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in block.parameters()]}
