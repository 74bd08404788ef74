"""A molecule generator's MLP built as a list in a loop: each block appends a
`nn.Linear`, a `nn.Tanh` and an in-place `nn.Dropout`, then the list becomes a
`nn.Sequential`.  Tanh keeps its output for backward and the dropout overwrites
it, so any training run with a dropout rate above zero fails ("modified by an
inplace operation"); the default rate, 0, writes nothing.
Source: https://github.com/yongqyu/MolGAN-pytorch (models.py, Generator)"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, conv_dims, z_dim, vertexes, edges, nodes, dropout):
        super().__init__()
        self.vertexes, self.edges, self.nodes = vertexes, edges, nodes
        layers = []
        for c0, c1 in zip([z_dim] + conv_dims[:-1], conv_dims):
            layers.append(nn.Linear(c0, c1))
            layers.append(nn.Tanh())
            layers.append(nn.Dropout(p=dropout, inplace=True))  # expect: ADL001
        self.layers = nn.Sequential(*layers)
        self.edges_layer = nn.Linear(conv_dims[-1], edges * vertexes * vertexes)
        self.nodes_layer = nn.Linear(conv_dims[-1], vertexes * nodes)

    def forward(self, z):
        h = self.layers(z)
        edges = self.edges_layer(h).view(-1, self.edges, self.vertexes, self.vertexes)
        edges = (edges + edges.permute(0, 1, 3, 2)) / 2
        nodes = self.nodes_layer(h).view(-1, self.vertexes, self.nodes)
        return edges.permute(0, 2, 3, 1), nodes


def run():
    torch.manual_seed(0)
    G = Generator([16, 32], z_dim=8, vertexes=5, edges=3, nodes=4, dropout=0.1)
    optimizer = torch.optim.Adam(G.parameters(), lr=1e-4)
    edges, nodes = G(torch.randn(6, 8))
    loss = -(edges.softmax(-1).mean() + nodes.softmax(-1).mean())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
