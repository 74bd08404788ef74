"""GNN message passing: `out += self.bias` on the aggregated messages.
Source: https://github.com/pyg-team/pytorch_geometric/issues/8953 (fix: `out = out + self.bias`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MaxConv(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.lin = nn.Linear(channels, channels, bias=False)
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x, edge_index):
        src, dst = edge_index
        messages = self.lin(x)[src]
        index = dst.unsqueeze(-1).expand_as(messages)
        out = x.new_zeros(x.shape).scatter_reduce(0, index, messages, reduce="amax", include_self=False)
        out += self.bias
        return out


conv = MaxConv(4)
x = torch.randn(5, 4)
edge_index = torch.tensor([[0, 1, 2, 3, 4, 0], [1, 2, 3, 4, 0, 2]])
loss = conv(x, edge_index).pow(2).sum()
loss.backward()
result = {"loss": loss.detach(), "lin": conv.lin.weight.grad, "bias": conv.bias.grad}
