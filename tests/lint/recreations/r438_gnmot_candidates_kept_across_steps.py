"""GNMOT's `GN.updateNetwork` runs the vertex network `Vphi` over every batch
of a frame first, keeping each batch's output `vr1` (with its graph) in a
list of `candidates`; it then loops over the candidates, and for each one
backpropagates a vertex loss and the edge loss through `vr1` and calls
`self.optimizer2.step()`, which updates `Vphi`.  The second candidate's
`vr1` was computed with the weights the first step has since changed in
place: its backward fails ("Trying to backward through the graph a second
time" in the report's PyTorch; "modified by an inplace operation" since
1.5).  The fix computes `vr1` inside the loop, right before its losses.
Buggy line: `v_l.backward(retain_graph=True)` in `GN.updateNetwork`.
Source: https://github.com/yinizhizhu/GNMOT/issues/12"""
import torch
import torch.nn as nn


class vphi(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc1 = nn.Linear(2 * dim, dim)
        self.fc2 = nn.Linear(dim, dim)

    def forward(self, e, vs, vr):
        hidden = torch.relu(self.fc1(torch.cat([vs, vr], dim=1)))
        return torch.tanh(self.fc2(hidden)) * e


class ephi(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.fc = nn.Linear(2 * dim, 2)

    def forward(self, vs, vr1):
        return self.fc(torch.cat([vs, vr1], dim=1))


class GN:
    def __init__(self, lr=1e-3):
        self.Vphi = vphi()
        self.Ephi2 = ephi()
        self.optimizer2 = torch.optim.Adam(
            [{"params": self.Ephi2.parameters()}, {"params": self.Vphi.parameters()}], lr=lr)
        self.criterion = nn.CrossEntropyLoss()
        self.criterion_v = nn.MSELoss()

    def updateNetwork(self, data_loader):
        candidates = []
        for e, gt, vs, vr in data_loader:
            vr1 = self.Vphi(e, vs, vr)
            candidates.append((e, gt, vs, vr, vr1))
        for i in range(len(candidates)):
            e, gt, vs, vr, vr1 = candidates[i]
            self.optimizer2.zero_grad()
            e2 = self.Ephi2(vs, vr1)
            v_l = self.criterion_v(vr, vr1)
            v_l.backward(retain_graph=True)
            loss = self.criterion(e2, gt)
            loss.backward()
            self.optimizer2.step()  # expect: ADL003


def run():
    torch.manual_seed(0)
    loader = [(torch.rand(3, 1), torch.randint(0, 2, (3,)), torch.randn(3, 4), torch.randn(3, 4)) for _ in range(2)]
    GN().updateNetwork(loader)
