"""VigilanceNet (EEG/EOG vigilance estimation) embeds the EEG features with a
1x1 convolution, batch norm and ReLU in an `EmbeddingModule`, transposes the
result and returns it; the network's `forward` then adds the learned position
embedding with `x1 += self.pos_embed`.  The returned tensor is a transposed
view of the ReLU output, which ReLU keeps for its backward, so the in-place
add bumps its version and `loss.backward()` in `train_model` raises "one of
the variables needed for gradient computation has been modified by an inplace
operation: [torch.DoubleTensor [64, 80, 5]], which is output 0 of
ReluBackward0".  Re-created as the repository's module layout (embedding
module, a small encoder, regression head) and its training loop, two batches.
Buggy line: `x1 += self.pos_embed` in `VigilanceNet.forward`.
Source: https://github.com/I-am-BigOrange/VigilanceNet/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class EmbeddingModule(nn.Module):
    """Embedding module of EEG features."""

    def __init__(self, in_chans=17, out_chans=80):
        super().__init__()
        self.proj = nn.Conv1d(in_channels=in_chans, out_channels=out_chans, kernel_size=1)
        self.BN = nn.BatchNorm1d(out_chans)

    def forward(self, x):
        out = F.relu(self.BN(self.proj(x)))
        out = out.transpose(2, 1)
        return out


class Regression(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.norm = nn.LayerNorm(hidden_size)
        self.predict = nn.Linear(hidden_size, 1)

    def forward(self, x):
        out = self.norm(x).mean(dim=1)
        return (torch.tanh(self.predict(out)) + 1) / 2


class VigilanceNet(nn.Module):
    def __init__(self, hidden_size=80, freq_bands=5):
        super().__init__()
        self.feature_embed1 = EmbeddingModule(in_chans=17, out_chans=hidden_size)
        self.pos_embed = nn.Parameter(torch.zeros(1, freq_bands, hidden_size))
        self.encoder1 = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.GELU())
        self.predict = Regression(hidden_size)

    def forward(self, x1):
        x1 = self.feature_embed1(x1)
        x1 += self.pos_embed  # expect: ADL001
        x1 = self.encoder1(x1)
        return self.predict(x1)


def train_model(net, batches, criterion, optimizer):
    net.train()
    for eeg, label in batches:
        optimizer.zero_grad()
        out = net(eeg)
        loss = criterion(out, label)
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    net = VigilanceNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    batches = [(torch.randn(8, 17, 5), torch.rand(8, 1)) for _ in range(2)]
    train_model(net, batches, nn.MSELoss(), optimizer)
