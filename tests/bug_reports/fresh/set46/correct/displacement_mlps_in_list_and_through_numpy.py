"""An implicit function for super-resolving displacement fields (digital image correlation): ten
residual MLPs, each fed the feature vector and an embedding of the relative coordinate, are mixed
by scores from an expansion network. The ten MLPs are kept in a plain Python list,
`self.mlps = [RES_MLP(...) for _ in range(10)]`, so the module does not register them and the
optimizer never sees their weights; their outputs are also collected with
`.cpu().detach().numpy()` and rebuilt with `torch.tensor(res_list)`, which cuts the graph, so the
coordinate MLP, reached only through them, gets no gradient either. Only the expansion network
trains, and nothing fails. The change: `nn.ModuleList` for the MLPs, and their outputs stacked with
`torch.stack` instead of the round trip through numpy.
Source: https://github.com/LianpoWang/SLIIF/issues/13
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class RESMLPS(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_list, coord_hidden_list):
        super().__init__()
        self.mlps = nn.ModuleList([RES_MLP(in_dim, out_dim, coord_hidden_list) for _ in range(10)])
        self.cood_mlp = COOD_MLP(2, 16, hidden_list)
        self.expansionNet = ExpansionNet(in_dim, 10, hidden_list)

    def forward(self, x, rel_coord):
        scores = self.expansionNet(x)
        cood_out = self.cood_mlp(rel_coord)
        res_list = [mlp(x, cood_out) for mlp in self.mlps]
        mlp_res = torch.stack(res_list)
        mlp_res = mlp_res.transpose(0, 1)
        return torch.sum(scores.unsqueeze(-1) * mlp_res, 1)


class RES_MLP(nn.Module):
    def __init__(self, in_dim, out_dim, coord_hidden_list):
        super().__init__()
        layers = []
        lastv = in_dim
        for hidden in coord_hidden_list:
            layers.append(nn.Linear(lastv, 16))
            lastv = hidden
        self.layers = nn.Sequential(*layers)
        self.relu = nn.ReLU()
        self.linear_out = nn.Linear(lastv, out_dim)

    def forward(self, x, cood_out):
        out = x.view(-1, x.shape[-1])
        for layer in self.layers:
            out = self.relu(layer(out))
            out = torch.add(out, cood_out)
        out = self.linear_out(out)
        shape = out.shape[:-1]
        return out.view(*shape, -1)


class COOD_MLP(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_list):
        super().__init__()
        layers = []
        lastv = in_dim
        for hidden in hidden_list:
            layers.append(nn.Linear(lastv, hidden))
            layers.append(nn.ReLU())
            lastv = hidden
        layers.append(nn.Linear(lastv, out_dim))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        shape = x.shape[:-1]
        x = self.layers(x.view(-1, x.shape[-1]))
        return x.view(*shape, -1)


class ExpansionNet(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_list):
        super().__init__()
        layers = []
        lastv = in_dim
        self.out_dim = out_dim
        for hidden in hidden_list:
            layers.append(nn.Linear(lastv, hidden))
            layers.append(nn.ReLU())
            lastv = hidden
        layers.append(nn.Linear(lastv, out_dim))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        b, c = x.shape
        x = x.view(-1, c)
        logits = self.layers(x)
        out = nn.functional.normalize(logits, dim=1)
        return out.view(b, self.out_dim)


model = RESMLPS(in_dim=12, out_dim=2, hidden_list=[16], coord_hidden_list=[16, 16])
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
feat = torch.randn(32, 12)
rel_coord = torch.rand(32, 2) * 2 - 1
displacement = torch.stack([torch.sin(3 * rel_coord[:, 0]), torch.cos(2 * rel_coord[:, 1])], 1)
losses = []
for step in range(20):
    optimizer.zero_grad()
    pred = model(feat, rel_coord)
    loss = nn.functional.l1_loss(pred, displacement)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"pred": model(feat, rel_coord).detach().clone(), "losses": torch.tensor(losses)}
