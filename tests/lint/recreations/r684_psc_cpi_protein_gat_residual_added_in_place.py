"""PSC-CPI (LirongWu/PSC-CPI), issue 1: running `train.py` under torch 1.13 failed at
`loss.backward()` with "one of the variables needed for gradient computation has been modified
by an inplace operation: [torch.cuda.FloatTensor [32, 1000, 256]], which is output 0 of
ReluBackward0, is at version 1; expected version 0".  The protein structure encoder
`net_prot_gat` (code/model.py) runs seven attention layers over the residue graph; each ends in
`x = self.relu(self.linear1[l](x))` followed by the residual `x += x0`, which adds into the
ReLU's output in place (batch 32, 1000 residues, hidden 256).  The author pointed to the torch
version; the reporter fixed it by changing the in-place operation.
Re-created with the model's protein embedding, the GAT encoder (two layers, 12 residues in place
of the hard-coded 1000), a pooled affinity head and the training loop of `train.py`.
Buggy line: `x += x0` in `net_prot_gat.forward`.
Source: https://github.com/LirongWu/PSC-CPI/issues/1"""
import torch
import torch.nn as nn


class net_prot_gat(nn.Module):
    def __init__(self, param):
        super().__init__()
        n_layers = param['gat_layers']
        self.n_res = param['n_res']
        self.linear0 = nn.ModuleList([nn.Linear(param['hidden_dim'], param['hidden_dim']) for _ in range(n_layers)])
        self.linear1 = nn.ModuleList([nn.Linear(param['hidden_dim'], param['hidden_dim']) for _ in range(n_layers)])
        self.w_attn = nn.ModuleList([nn.Linear(param['hidden_dim'], param['hidden_dim']) for _ in range(n_layers)])
        self.linear_final = nn.Linear(param['hidden_dim'], param['hidden_dim'])
        self.relu = nn.ReLU()
        self.sigmoid = nn.Sigmoid()

    def forward(self, x, adj):
        adj[:, list(range(self.n_res)), list(range(self.n_res))] = 1
        for l in range(len(self.linear0)):
            x0 = x
            adj_attn = self.sigmoid(torch.einsum('bij,bkj->bik', self.w_attn[l](x), x))
            adj_attn = adj_attn + 1e-5 * torch.eye(self.n_res)
            adj_attn = torch.einsum('bij,bij->bij', adj_attn, adj)
            adj_attn_sum = torch.einsum('bij->bi', adj_attn)
            adj_attn = torch.einsum('bij,bi->bij', adj_attn, 1 / adj_attn_sum)
            x = torch.einsum('bij,bjd->bid', adj_attn, x)
            x = self.relu(self.linear0[l](x))
            x = self.relu(self.linear1[l](x))
            x += x0  # expect: ADL001
        x = self.linear_final(x)
        return x


class ProteinEmbed_Model(nn.Module):
    def __init__(self, param):
        super().__init__()
        self.aminoAcid_embedding = nn.Embedding(29, param['hidden_dim'])
        self.gat = net_prot_gat(param)
        self.regressor = nn.Sequential(nn.Linear(param['hidden_dim'], 16), nn.LeakyReLU(0.1), nn.Linear(16, 1))

    def forward(self, prot_data, prot_contacts, label):
        prot_graph_embedding = self.aminoAcid_embedding(prot_data)
        prot_graph_embedding = self.gat(prot_graph_embedding, prot_contacts)
        affn = self.regressor(prot_graph_embedding.mean(dim=1))
        return self.loss_affn(affn, label)

    def loss_affn(self, affn, label):
        return ((affn - label) ** 2).mean()


def train(model, train_loader, optimizer):
    model.train()
    for prot_data, prot_contacts, label in train_loader:
        optimizer.zero_grad()
        loss = model(prot_data, prot_contacts, label)
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    param = {'hidden_dim': 8, 'gat_layers': 2, 'n_res': 12}
    model = ProteinEmbed_Model(param)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    loader = [(torch.randint(0, 29, (2, 12)), (torch.rand(2, 12, 12) > 0.5).float(), torch.randn(2, 1))]
    train(model, loader, optimizer)


if __name__ == "__main__":
    run()
