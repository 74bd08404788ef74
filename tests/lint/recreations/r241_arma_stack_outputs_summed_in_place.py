"""DGL's ARMA example (graph convolution with K parallel stacks of T
recursive layers) averages the stacks at the end of `ARMAConv.forward`:
`if output is None: output = feats` for the first stack, then
`output += feats` for the others.  `output` is the first stack's last
activation (`F.relu`), which `relu` keeps for its backward; adding the next
stacks into it in place makes `loss.backward()` fail ("one of the variables
needed for gradient computation has been modified by an inplace
operation").  The fix stacks the outputs and takes their mean.
Buggy line: `output += feats` in `ARMAConv.forward`.
Expected finding: ADL001 there.
Source: https://github.com/dmlc/dgl/pull/4218"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ARMAConv(nn.Module):
    def __init__(self, in_dim, out_dim, num_stacks=2, num_layers=2, activation=F.relu, dropout=0.0):
        super().__init__()
        self.K = num_stacks
        self.T = num_layers
        self.activation = activation
        self.dropout = nn.Dropout(dropout)
        self.w_0 = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})
        self.w = nn.ModuleDict({str(k): nn.Linear(out_dim, out_dim, bias=False) for k in range(self.K)})
        self.v = nn.ModuleDict({str(k): nn.Linear(in_dim, out_dim, bias=False) for k in range(self.K)})

    def forward(self, adj, feats):
        init_feats = feats
        deg = adj.sum(1).clamp(min=1)
        norm = deg.pow(-0.5).unsqueeze(1)
        output = None
        for k in range(self.K):
            feats = init_feats
            for t in range(self.T):
                feats = feats * norm
                feats = adj @ feats
                feats = feats * norm
                if t == 0:
                    feats = self.w_0[str(k)](feats)
                else:
                    feats = self.w[str(k)](feats)
                feats = feats + self.v[str(k)](self.dropout(init_feats))
                if self.activation is not None:
                    feats = self.activation(feats)
            if output is None:
                output = feats
            else:
                output += feats  # missed: ADL001
        return output / self.K


class ARMA4NC(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim):
        super().__init__()
        self.conv1 = ARMAConv(in_dim, hid_dim)
        self.conv2 = ARMAConv(hid_dim, out_dim, activation=None)

    def forward(self, adj, feats):
        return self.conv2(adj, self.conv1(adj, feats))


def run():
    torch.manual_seed(0)
    adj = (torch.rand(6, 6) > 0.5).float()
    feats, labels = torch.randn(6, 4), torch.tensor([0, 1, 0, 1, 1, 0])
    model = ARMA4NC(4, 8, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(2):
        loss = F.cross_entropy(model(adj, feats), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
