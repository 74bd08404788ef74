"""Modof (ziqi92/Modof), issue 3: training failed in `backward()` with "one of the variables
needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [860, 32]], which is output 0 of ReluBackward0, is at version 1; expected
version 0".  `MolEncoder.forward` (model/mol_enc.py) computes the atom embeddings with
`self.mpn(..., self.W_a, self.outputAtom)`, where `mpn` ends in `node_vecs = W_n(node_vecs)` and
`outputAtom` is `nn.Sequential(nn.Linear(...), nn.ReLU())`; then it zeroes the padding atom's row
in place, `hatom[0,:] = hatom[0,:] * 0`, which writes into the ReLU's saved output (860 atoms,
hidden size 32).  The tree embeddings get the same treatment (`hnode[0,:] = hnode[0,:] * 0`).
Re-created with the encoder's message-passing helpers (a plain message-passing loop in place of
the repository's GRU), its `forward` and a property-regression training step.
Buggy line: `hatom[0,:] = hatom[0,:] * 0` (and the same write on `hnode`).
Source: https://github.com/ziqi92/Modof/issues/3"""
import torch
import torch.nn as nn


def index_select_ND(source, dim, index):
    index_size = index.size()
    suffix_dim = source.size()[1:]
    final_size = index_size + suffix_dim
    target = source.index_select(dim, index.view(-1))
    return target.view(final_size)


def MPNN(fmess, mess_graph, W_m, depth, hidden_size):
    multi_layer_mess = []
    messages = torch.zeros(mess_graph.size(0), hidden_size)
    for i in range(depth):
        nei_message = index_select_ND(messages, 0, mess_graph).sum(dim=1)
        messages = torch.relu(W_m(torch.cat([fmess, nei_message], dim=1)))
        multi_layer_mess.append(messages)
    return torch.cat(multi_layer_mess, dim=1)


class MolEncoder(nn.Module):
    def __init__(self, hidden_size, atom_size, bond_size, depthG):
        super().__init__()
        self.hidden_size = hidden_size
        self.depthG = depthG
        self.E_a = torch.eye(atom_size)
        self.E_b = torch.eye(bond_size)
        self.W_a = nn.Linear(atom_size + bond_size + hidden_size, hidden_size)
        self.outputAtom = nn.Sequential(
            nn.Linear(atom_size + depthG * hidden_size, hidden_size),
            nn.ReLU()
        )

    def embed_graph(self, graph_tensors):
        fnode, fmess, agraph, bgraph = graph_tensors
        hnode = self.E_a.index_select(index=fnode, dim=0)
        fmess1 = hnode.index_select(index=fmess[:, 0], dim=0)
        fmess2 = self.E_b.index_select(index=fmess[:, 2], dim=0)
        hmess = torch.cat([fmess1, fmess2], dim=-1)
        return hnode, hmess, agraph, bgraph

    def mpn(self, hnode, hmess, agraph, bgraph, depth, W_m, W_n):
        messages = MPNN(hmess, bgraph, W_m, depth, self.hidden_size)
        mess_nei = index_select_ND(messages, 0, agraph)
        node_vecs = torch.cat((hnode, mess_nei.sum(dim=1)), dim=-1)
        node_vecs = W_n(node_vecs)
        return node_vecs, messages

    def forward(self, graph_tensors):
        tensors = self.embed_graph(graph_tensors)
        hatom, _ = self.mpn(*tensors, self.depthG, self.W_a, self.outputAtom)
        hatom[0,:] = hatom[0,:] * 0  # expect: ADL001
        return hatom


class MolOpt(nn.Module):
    def __init__(self, hidden_size=8, atom_size=5, bond_size=3, depthG=2):
        super().__init__()
        self.encoder = MolEncoder(hidden_size, atom_size, bond_size, depthG)
        self.score = nn.Linear(hidden_size, 1)

    def forward(self, graph_tensors, target):
        hatom = self.encoder(graph_tensors)
        pred = self.score(hatom.sum(dim=0))
        return ((pred - target) ** 2).sum()


def make_graph(n_atoms=6, n_mess=8):
    fnode = torch.randint(0, 5, (n_atoms,))
    fmess = torch.stack([torch.randint(0, n_atoms, (n_mess,)), torch.randint(0, n_atoms, (n_mess,)),
                         torch.randint(0, 3, (n_mess,))], dim=1)
    agraph = torch.randint(0, n_mess, (n_atoms, 3))
    bgraph = torch.randint(0, n_mess, (n_mess, 3))
    return fnode, fmess, agraph, bgraph


def run():
    torch.manual_seed(0)
    model = MolOpt()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for graph, target in [(make_graph(), torch.randn(1))]:
        model.zero_grad()
        loss = model(graph, target)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    run()
