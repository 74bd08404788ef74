"""PyG's `FiLMConv` starts its output from the FiLM-modulated skip
connection, applies the activation it was built with (a ReLU module by
default), and then adds each relation's messages with `out += ...`.  The
ReLU keeps its output for backward; the augmented assignment writes that
output in place, so `loss.backward()` in the FiLM example fails ("output 0
of ReluBackward0 ... is at version 1; expected version 0").  The fix writes
`out = out + ...`.
Buggy line: `out += self.propagate(...)` in `FiLMConv.forward`.
Expected finding: ADL001 there (a write to a tensor the activation saved).
Source: https://github.com/pyg-team/pytorch_geometric/issues/3621"""
import torch
import torch.nn as nn


class FiLMConv(nn.Module):
    def __init__(self, in_channels, out_channels, num_relations=2, act=nn.ReLU()):
        super().__init__()
        self.out_channels = out_channels
        self.act = act
        self.lins = nn.ModuleList([nn.Linear(in_channels, out_channels, bias=False) for _ in range(num_relations)])
        self.films = nn.ModuleList([nn.Linear(in_channels, 2 * out_channels) for _ in range(num_relations)])
        self.lin_skip = nn.Linear(in_channels, out_channels, bias=False)
        self.film_skip = nn.Linear(in_channels, 2 * out_channels, bias=False)

    def propagate(self, edge_index, x, beta, gamma):
        src, dst = edge_index
        messages = gamma[dst] * x[src] + beta[dst]
        return torch.zeros(gamma.size(0), self.out_channels).index_add(0, dst, self.act(messages))

    def forward(self, x, edge_index, edge_type):
        beta, gamma = self.film_skip(x).split(self.out_channels, dim=-1)
        out = gamma * self.lin_skip(x) + beta
        if self.act is not None:
            out = self.act(out)
        for i, (lin, film) in enumerate(zip(self.lins, self.films)):
            beta, gamma = film(x).split(self.out_channels, dim=-1)
            mask = edge_type == i
            out += self.propagate(edge_index[:, mask], x=lin(x), beta=beta, gamma=gamma)  # expect: ADL001
        return out


def run():
    torch.manual_seed(0)
    conv = FiLMConv(4, 3)
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    edge_type = torch.tensor([0, 1, 0, 1])
    loss = conv(x, edge_index, edge_type).pow(2).mean()
    loss.backward()
