"""SidechainNet, `sidechainnet/structure/StructureBuilder.py` before commit f1636bb ("Detach tensor
before .numpy() in SB.to_prody"): `StructureBuilder` turns predicted torsion angles into atom
coordinates residue by residue with the differentiable NeRF placement, each `ResidueBuilder`
keeping its backbone and side-chain atoms in `self.bb` and `self.sc`.  `ResidueBuilder.to_prody`
exports a residue with `ag.setCoords(torch.stack(self.bb + self.sc).numpy())`; when the angles
come from a model being trained (they require grad) the coordinates carry a graph and `.numpy()`
raises "Can't call numpy() on Tensor that requires grad".
Re-created in my own words with the module's structure: the NeRF placement function, the
`StructureBuilder` iterating `ResidueBuilder`s that extend the previous residue's backbone, the
`to_prody` export (a minimal atom group stands in for ProDy's), and an angle-predicting model
whose output is built and exported.
Raises at `torch.stack(self.bb + self.sc).numpy()`.
Source: https://github.com/jonathanking/sidechainnet/blob/b6c422ee05b513d7178273e9246468dd959644b2/sidechainnet/structure/StructureBuilder.py"""
import numpy as np
import torch
import torch.nn as nn

ONE_TO_THREE_LETTER_MAP = {"A": "ALA", "G": "GLY", "S": "SER"}
BB_BUILD_INFO = {"BONDLENS": {"n-ca": 1.442, "ca-c": 1.498, "c-n": 1.379}, "BONDANGS": {"ca-c-n": 2.124, "c-n-ca": 2.1, "n-ca-c": 1.941}}


class AtomGroup:
    """Stands in for prody.AtomGroup: keeps coordinates as a NumPy array."""

    def __init__(self):
        self.coords, self.names, self.resnames = None, None, None

    def setCoords(self, coords):
        self.coords = np.asarray(coords, dtype=float)

    def setNames(self, names):
        self.names = list(names)

    def setResnames(self, resnames):
        self.resnames = list(resnames)


def get_next_bb_atom(a, b, c, bond_len, theta, chi):
    bc = c - b
    bc = bc / bc.norm()
    n = torch.cross(b - a, bc, dim=0)
    n = n / n.norm()
    m = torch.stack([bc, torch.cross(n, bc, dim=0), n], dim=1)
    d2 = torch.stack([-bond_len * torch.cos(theta), bond_len * torch.sin(theta) * torch.cos(chi),
                      bond_len * torch.sin(theta) * torch.sin(chi)])
    return c + m @ d2


class ResidueBuilder(object):
    def __init__(self, name, angles, prev_bb, next_res):
        self.name = name
        self.ang = angles
        self.prev_bb = prev_bb
        self.next_res = next_res
        self.bb = []
        self.sc = []
        self.atom_names = ["N", "CA", "C", "CB"]

    def build(self):
        self.build_bb()
        self.build_sc()
        return self.bb + self.sc

    def build_bb(self):
        if self.prev_bb is None:
            n = torch.zeros(3)
            ca = torch.tensor([BB_BUILD_INFO["BONDLENS"]["n-ca"], 0.0, 0.0])
            c = ca + torch.stack([torch.cos(self.ang[2]), torch.sin(self.ang[2]), torch.zeros(())]) * BB_BUILD_INFO["BONDLENS"]["ca-c"]
            self.bb = [n, ca, c]
            return self.bb
        a, b, c = self.prev_bb[-3:]
        n = get_next_bb_atom(a, b, c, BB_BUILD_INFO["BONDLENS"]["c-n"], torch.tensor(BB_BUILD_INFO["BONDANGS"]["ca-c-n"]), self.ang[1])
        ca = get_next_bb_atom(b, c, n, BB_BUILD_INFO["BONDLENS"]["n-ca"], torch.tensor(BB_BUILD_INFO["BONDANGS"]["c-n-ca"]), self.ang[2])
        c_new = get_next_bb_atom(c, n, ca, BB_BUILD_INFO["BONDLENS"]["ca-c"], torch.tensor(BB_BUILD_INFO["BONDANGS"]["n-ca-c"]), self.ang[0])
        self.bb = [n, ca, c_new]
        return self.bb

    def build_sc(self):
        n, ca, c = self.bb
        cb = get_next_bb_atom(c, n, ca, 1.53, torch.tensor(1.91), self.ang[3])
        self.sc = [cb]
        return self.sc

    def to_prody(self, res):
        ag = AtomGroup()
        ag.setCoords(torch.stack(self.bb + self.sc).numpy())  # missed: ADL036 (coordinates reach .numpy() through list attributes built by other methods)
        ag.setNames(self.atom_names)
        ag.setResnames([ONE_TO_THREE_LETTER_MAP[self.name]] * len(self.atom_names))
        return ag


class StructureBuilder(object):
    def __init__(self, seq, ang):
        self.seq = seq
        self.ang = ang
        self.coords = []
        self.prev_ang = None
        self.prev_bb = None
        self.next_bb = None
        self.pdb_creator = None
        self.residues = []

    def __iter__(self):
        self.iter_i = 0
        return self

    def __next__(self):
        if self.iter_i < len(self.seq):
            if self.iter_i > 0:
                self.prev_bb = self.residues[-1].bb
            res = ResidueBuilder(self.seq[self.iter_i], self.ang[self.iter_i], self.prev_bb, None)
            self.iter_i += 1
            return res
        raise StopIteration

    def build(self):
        for residue in self:
            self.coords.append(residue.build())
            self.residues.append(residue)
        return self.coords

    def to_prody(self):
        return [res.to_prody(i) for i, res in enumerate(self.residues)]


class AnglePredictor(nn.Module):
    def __init__(self, vocab="AGS"):
        super().__init__()
        self.vocab = vocab
        self.embed = nn.Embedding(len(vocab), 8)
        self.out = nn.Linear(8, 4)

    def forward(self, seq):
        idx = torch.tensor([self.vocab.index(aa) for aa in seq])
        return torch.pi * torch.tanh(self.out(self.embed(idx)))


def run():
    torch.manual_seed(0)
    seq = "AGSA"
    model = AnglePredictor()
    angles = model(seq)
    sb = StructureBuilder(seq, angles)
    sb.build()
    return sb.to_prody()
