"""A video action-recognition model checkpoints each temporal block with the reentrant
`torch.utils.checkpoint.checkpoint` to save memory. The block returns its features transposed back
to (batch, channels, time) -- a view of a tensor made inside checkpoint's custom Function -- and the
caller adds the skip connection in place, `out += identity`. The forward fails with "Output 0 of
CheckpointFunction is a view and is being modified inplace. This view was created inside a custom
Function ...". The maintainers' answer (albanD): the in-place op on a view returned by a custom
Function is not allowed; write the residual out of place, `out = out + identity`.
Source: https://github.com/pytorch/pytorch/issues/26546
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class TemporalBlock(nn.Module):
    """Mixes frames with a 1-D conv over time, then channels with an MLP on (B, T, C)."""

    def __init__(self, channels):
        super().__init__()
        self.temporal = nn.Conv1d(channels, channels, 3, padding=1)
        self.norm = nn.LayerNorm(channels)
        self.mlp = nn.Sequential(nn.Linear(channels, 2 * channels), nn.GELU(), nn.Linear(2 * channels, channels))

    def forward(self, x):
        y = self.temporal(x).transpose(1, 2)
        y = self.mlp(self.norm(y))
        return y.transpose(1, 2)


class VideoEncoder(nn.Module):
    def __init__(self, in_dim=12, channels=16, depth=2, classes=5, use_checkpoint=True):
        super().__init__()
        self.stem = nn.Linear(in_dim, channels)
        self.blocks = nn.ModuleList(TemporalBlock(channels) for _ in range(depth))
        self.head = nn.Linear(channels, classes)
        self.use_checkpoint = use_checkpoint

    def forward(self, frames):
        x = self.stem(frames).transpose(1, 2)
        for block in self.blocks:
            identity = x
            if self.use_checkpoint and self.training:
                out = checkpoint(block, x, use_reentrant=True)
            else:
                out = block(x)
            out = out + identity
            x = F.relu(out)
        return self.head(x.mean(-1))


model = VideoEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
losses = []
model.train()
for step in range(3):
    frames = torch.randn(4, 8, 12)
    labels = torch.randint(0, 5, (4,))
    loss = F.cross_entropy(model(frames), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
