"""TAMP-S2GCNets (time-aware multipersistence spatio-supra graph networks,
traffic forecasting on PeMSD8's 170 sensors) builds its learned adjacency in
the graph-convolution cell: `initial_S = F.relu(torch.mm(node_embeddings,
node_embeddings.transpose(0, 1)))`, then `initial_S.fill_diagonal_(0)` and
`initial_S.fill_diagonal_(stay_cost)` before the softmax.  ReLU keeps its
output for the backward, and the two in-place fills change it, so the
trainer's `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation: [torch.cuda.FloatTensor
[170, 170]], which is output 0 of ReluBackward0, is at version 2; expected
version 0".  Re-created as the cell (Laplacian, its powers, graph
convolution), a one-cell model and the `Trainer.train_epoch` loop.
Buggy line: `initial_S.fill_diagonal_(0)` (and the fill after it).
Source: https://github.com/tamps2gcnets/TAMP_S2GCNets/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TAMPGCNCell(nn.Module):
    def __init__(self, dim_in, dim_out, link_len, embed_dim):
        super().__init__()
        self.link_len = link_len
        self.weights_pool = nn.Parameter(torch.randn(embed_dim, link_len, dim_in, dim_out) * 0.1)
        self.bias_pool = nn.Parameter(torch.zeros(embed_dim, dim_out))

    def forward(self, x, node_embeddings, stay_cost):
        node_num = node_embeddings.shape[0]
        initial_S = F.relu(torch.mm(node_embeddings, node_embeddings.transpose(0, 1)))
        initial_S.fill_diagonal_(0)  # expect: ADL001
        initial_S.fill_diagonal_(stay_cost)  # expect: ADL001
        S = F.softmax(initial_S, dim=1)
        support_set = [torch.eye(node_num), S]
        for k in range(2, self.link_len):
            support_set.append(torch.mm(S, support_set[k - 1]))
        supports = torch.stack(support_set, dim=0)
        weights = torch.einsum('nd,dkio->nkio', node_embeddings, self.weights_pool)
        bias = torch.matmul(node_embeddings, self.bias_pool)
        x_s = torch.einsum("knm,bmc->bknc", supports, x).permute(0, 2, 1, 3)
        return torch.einsum('bnki,nkio->bno', x_s, weights) + bias


class TAMPGCNModel(nn.Module):
    def __init__(self, num_nodes=20, dim_in=2, dim_out=8, embed_dim=4):
        super().__init__()
        self.node_embeddings = nn.Parameter(torch.randn(num_nodes, embed_dim))
        self.cell = TAMPGCNCell(dim_in, dim_out, link_len=3, embed_dim=embed_dim)
        self.end_conv = nn.Linear(dim_out, 1)

    def forward(self, x, stay_cost=0.5):
        return self.end_conv(self.cell(x, self.node_embeddings, stay_cost))


class Trainer:
    def __init__(self, model, loss, optimizer, batches):
        self.model, self.loss, self.optimizer, self.batches = model, loss, optimizer, batches

    def train_epoch(self):
        self.model.train()
        total_loss = 0
        for data, target in self.batches:
            self.optimizer.zero_grad()
            output = self.model(data)
            loss = self.loss(output, target)
            loss.backward()
            self.optimizer.step()
            total_loss += loss.item()
        return total_loss / len(self.batches)


def run():
    torch.manual_seed(0)
    model = TAMPGCNModel()
    batches = [(torch.randn(4, 20, 2), torch.randn(4, 20, 1)) for _ in range(2)]
    trainer = Trainer(model, nn.L1Loss(), torch.optim.Adam(model.parameters(), lr=1e-3), batches)
    trainer.train_epoch()
