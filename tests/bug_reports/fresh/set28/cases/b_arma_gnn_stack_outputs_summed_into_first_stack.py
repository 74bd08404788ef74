"""Node classification with a graph neural network of ARMA filters (Bianchi et al.), as in a
graph library's ARMA example: each ARMAConv layer runs K parallel stacks of T propagation steps
(normalised adjacency, a linear map, a skip term from the layer's input, a bias, a ReLU) and
averages the K stacks. The average is accumulated in place: the first stack's output is kept as
`output = feats` and every later stack is added with `output += feats`. `feats` of the first
stack is the ReLU's result, which ReLU saved for its backward, so the `+=` modifies a saved
tensor and `train_loss.backward()` raises "one of the variables needed for gradient computation
has been modified by an inplace operation: [torch.FloatTensor [N, C]], which is output 0 of
ReluBackward0, is at version 1; expected version 0 instead".
Source: https://github.com/dmlc/dgl/issues/4202 ("[Example][Bug] Running error on the example
case: example/pytorch/arma"; the example's model now collects the stacks in a list and returns
`torch.stack(output).mean(dim=0)`)
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def glorot(tensor):
    if tensor is not None:
        stdv = math.sqrt(6.0 / (tensor.size(-2) + tensor.size(-1)))
        tensor.data.uniform_(-stdv, stdv)


def zeros(tensor):
    if tensor is not None:
        tensor.data.fill_(0)


class Graph:
    """A small undirected graph held as an edge list (src -> dst), with sum aggregation."""

    def __init__(self, src, dst, num_nodes):
        self.src, self.dst, self.num_nodes = src, dst, num_nodes

    def in_degrees(self):
        return torch.bincount(self.dst, minlength=self.num_nodes)

    def copy_u_sum(self, h):
        out = torch.zeros(self.num_nodes, h.size(1))
        return out.index_add(0, self.dst, h[self.src])


class ARMAConv(nn.Module):
    def __init__(self, in_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0,
                 bias=True):
        super(ARMAConv, self).__init__()
        self.in_dim = in_dim
        self.out_dim = out_dim
        self.K = num_stacks
        self.T = num_layers
        self.activation = activation
        self.dropout = nn.Dropout(p=dropout)
        self.w_0 = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        self.w = nn.ModuleDict({str(k): nn.Linear(out_dim, out_dim, bias=False) for k in range(self.K)})
        self.v = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        if bias:
            self.bias = nn.Parameter(torch.Tensor(self.K, self.T, 1, self.out_dim))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        for k in range(self.K):
            glorot(self.w_0[str(k)].weight)
            glorot(self.w[str(k)].weight)
            glorot(self.v[str(k)].weight)
        zeros(self.bias)

    def forward(self, g, feats):
        init_feats = feats
        degs = g.in_degrees().float().clamp(min=1)
        norm = torch.pow(degs, -0.5).unsqueeze(1)
        output = None

        for k in range(self.K):
            feats = init_feats
            for t in range(self.T):
                feats = feats * norm
                feats = g.copy_u_sum(feats)
                feats = feats * norm

                if t == 0:
                    feats = self.w_0[str(k)](feats)
                else:
                    feats = self.w[str(k)](feats)

                feats += self.dropout(self.v[str(k)](init_feats))
                feats += self.v[str(k)](self.dropout(init_feats))

                if self.bias is not None:
                    feats += self.bias[k][t]

                if self.activation is not None:
                    feats = self.activation(feats)

            if output is None:
                output = feats
            else:
                output += feats

        return output / self.K


class ARMA4NC(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, num_stacks, num_layers, activation=None, dropout=0.0):
        super(ARMA4NC, self).__init__()
        self.conv1 = ARMAConv(in_dim, hid_dim, num_stacks, num_layers, activation, dropout)
        self.conv2 = ARMAConv(hid_dim, out_dim, num_stacks, num_layers, activation, dropout)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, g, feats):
        feats = F.relu(self.conv1(g, feats))
        feats = self.dropout(feats)
        feats = self.conv2(g, feats)
        return feats


def make_graph(num_nodes=40, num_classes=3):
    labels = torch.randint(0, num_classes, (num_nodes,))
    src, dst = [], []
    for i in range(num_nodes):
        for j in range(i + 1, num_nodes):
            p = 0.25 if labels[i] == labels[j] else 0.03
            if torch.rand(()) < p:
                src += [i, j]
                dst += [j, i]
    feats = F.one_hot(labels, num_classes).float() + 0.8 * torch.randn(num_nodes, num_classes)
    feats = torch.cat([feats, torch.randn(num_nodes, 5)], dim=1)
    return Graph(torch.tensor(src), torch.tensor(dst), num_nodes), feats, labels


graph, features, labels = make_graph()
train_mask = torch.zeros(len(labels), dtype=torch.bool)
train_mask[::2] = True
model = ARMA4NC(in_dim=features.size(1), hid_dim=16, out_dim=3, num_stacks=2, num_layers=1,
                activation=nn.ReLU(), dropout=0.5)
opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)

losses = []
for epoch in range(20):
    model.train()
    logits = model(graph, features)
    train_loss = F.cross_entropy(logits[train_mask], labels[train_mask])
    opt.zero_grad()
    train_loss.backward()
    opt.step()
    losses.append(train_loss.detach())

model.eval()
with torch.no_grad():
    test_logits = model(graph, features)

result = {"losses": torch.stack(losses), "test_logits": test_logits,
          "params": [p.detach().clone() for p in model.parameters()]}
print("final train loss", losses[-1].item())
