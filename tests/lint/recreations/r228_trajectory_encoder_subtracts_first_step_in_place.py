"""Making coordinates relative to the first time step in place, `x -=
x[:, :1]`, reads the column it is overwriting: PyTorch raises ("some
elements of the input tensor and the written-to tensor refer to a single
memory location") only when the tensor has a single row; with more rows it
runs, and the result depends on the order in which the kernel writes (the
first column can be zeroed before the others have subtracted it).  A trajectory
encoder that re-centres each agent's embedded track this way silently
feeds its GRU the absolute features instead of relative ones.  The fix
subtracts out of place (`x = x - x[:, :1]`).
Buggy line: `h -= h[:, :1]` in `TrajectoryEncoder.forward`.
Expected finding: ADL010 there.
Source: https://github.com/pytorch/pytorch/issues/135487"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TrajectoryEncoder(nn.Module):
    def __init__(self, in_dim=2, hidden=4, relative=True, in_place=True):
        super().__init__()
        self.embed = nn.Linear(in_dim, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.head = nn.Linear(hidden, in_dim)
        self.relative = relative
        self.in_place = in_place

    def forward(self, tracks):
        h = self.embed(tracks).transpose(1, 2)  # (agents, hidden, time)
        if self.relative:
            if self.in_place:
                h -= h[:, :, :1]  # expect: ADL010
            else:
                h = h - h[:, :, :1]
        out, _ = self.gru(h.transpose(1, 2))
        return self.head(out[:, -1])


def bug_shows():
    """The in-place re-centring does not compute what the out-of-place one does."""
    torch.manual_seed(0)
    buggy = TrajectoryEncoder(in_place=True)
    reference = TrajectoryEncoder(in_place=False)
    reference.load_state_dict(buggy.state_dict())
    tracks = torch.randn(3, 5, 2)
    return not torch.allclose(buggy(tracks), reference(tracks))


def run():
    torch.manual_seed(0)
    model = TrajectoryEncoder()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for tracks, target in [(torch.randn(3, 5, 2), torch.randn(3, 2))]:
        optimizer.zero_grad()
        F.mse_loss(model(tracks), target).backward()
        optimizer.step()
