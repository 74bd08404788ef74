"""SynSin's ResNet encoder and decoder normalise with a batch norm of their
own that, in training, keeps a running copy of the batch statistics for
evaluation: `self.stored_mean = m * self.stored_mean + (1 - m) * mean`.  The
batch mean comes from the convolution's output, so each stored statistic is
a graph tensor that holds the previous one's graph: the graph grows with
every call and CPU memory leaked at ~7 MB/s until training crashed.  Nothing
raises.  The fix updates the stored statistics from detached values.
Buggy line: `self.stored_mean = ...` in `StoredBatchNorm.forward` (and the
same for `stored_var`).
Expected finding: ADL017 (a buffer given a statistic of a graph).
Source: https://github.com/facebookresearch/synsin/pull/20"""
import torch
import torch.nn as nn


class StoredBatchNorm(nn.Module):
    def __init__(self, channels, momentum=0.1, eps=1e-5):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.register_buffer("stored_mean", torch.zeros(channels))
        self.register_buffer("stored_var", torch.ones(channels))

    def forward(self, x):
        if self.training:
            mean = x.mean(dim=(0, 2, 3))
            var = x.var(dim=(0, 2, 3))
            self.stored_mean = (1 - self.momentum) * self.stored_mean + self.momentum * mean  # expect: ADL017
            self.stored_var = (1 - self.momentum) * self.stored_var + self.momentum * var  # expect: ADL017
        else:
            mean, var = self.stored_mean, self.stored_var
        x = (x - mean[None, :, None, None]) / torch.sqrt(var[None, :, None, None] + self.eps)
        return x * self.weight[None, :, None, None] + self.bias[None, :, None, None]


class ResNetEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = StoredBatchNorm(4)

    def forward(self, img):
        return torch.relu(self.norm(self.conv(img)))


def train(encoder, optimizer, images):
    for img in images:
        loss = encoder(img).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def bug_shows():
    """After training, the stored statistics still carry a graph (a chain
    through every training step) instead of being plain numbers."""
    torch.manual_seed(0)
    encoder = ResNetEncoder()
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.01)
    train(encoder, optimizer, [torch.randn(2, 3, 5, 5) for _ in range(3)])
    return encoder.norm.stored_mean.grad_fn is not None
