"""Heterogeneous GNN: after the messages of one edge type are summed with `scatter_add` (which
saves its index), the edge index is shifted in place to address the next node type's block.
Source: https://github.com/pyg-team/pytorch_geometric/issues/7283 (error in ScatterAddBackward0;
fix: shift a copy of the index).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
lin = nn.Linear(4, 4)
x = torch.randn(6, 4)
edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 0, 1]])
offset = 3

messages = lin(x)[edge_index[0]]
index = edge_index[1].unsqueeze(-1).expand_as(messages)
out = torch.zeros(6, 4).scatter_add(0, index, messages)
edge_index[1] += offset
out2 = torch.zeros(6, 4).scatter_add(0, edge_index[1].unsqueeze(-1).expand_as(messages), messages)
loss = (out + out2).pow(2).sum()
loss.backward()
result = {"loss": loss.detach(), "w": lin.weight.grad, "b": lin.bias.grad}
