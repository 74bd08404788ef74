"""RPNet (R-peak detection, an Inception-residual U-Net for ECG): each
encoder stage is an `nn.Sequential` that ends in an `IncResBlock`, whose
`forward` ends with `out = self.relu(out)`; the next stage starts with
`nn.LeakyReLU(0.2, inplace=True)`, which overwrites the ReLU's result that
the ReLU's backward needs, so training fails at `loss.backward()`
("modified by an inplace operation"); the pull request turns the in-place
activations off.
Source: https://github.com/acrarshin/RPNet/pull/6"""
import torch
import torch.nn as nn


class IncResBlock(nn.Module):
    def __init__(self, inplanes, planes, convsize=15, convpadding=7):
        super().__init__()
        self.Inputconv1x1 = nn.Conv1d(inplanes, planes, kernel_size=1, stride=1, bias=False)
        self.conv1_1 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 2, kernel_size=convsize, padding=convpadding),
            nn.BatchNorm1d(planes // 2))
        self.conv1_2 = nn.Sequential(
            nn.Conv1d(inplanes, planes // 2, kernel_size=1, bias=False),
            nn.BatchNorm1d(planes // 2),
            nn.LeakyReLU(0.2),
            nn.Conv1d(planes // 2, planes // 2, kernel_size=convsize + 2, padding=convpadding + 1),
            nn.BatchNorm1d(planes // 2))
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = self.Inputconv1x1(x)
        c1 = self.conv1_1(x)
        c2 = self.conv1_2(x)
        out = torch.cat([c1, c2], 1)
        out = out + residual
        out = self.relu(out)
        return out


class IncUNet(nn.Module):
    def __init__(self, in_channels=1):
        super().__init__()
        self.e1 = nn.Sequential(
            nn.Conv1d(in_channels, 8, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(8),
            nn.LeakyReLU(0.2),
            IncResBlock(8, 8))
        self.e2 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv1d(8, 16, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(16),
            IncResBlock(16, 16))
        self.d1 = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(16, 8, kernel_size=4, stride=2, padding=1),
            nn.BatchNorm1d(8))
        self.out_l = nn.Sequential(
            nn.LeakyReLU(0.2),
            nn.ConvTranspose1d(16, in_channels, kernel_size=4, stride=2, padding=1))

    def forward(self, x):
        en1 = self.e1(x)
        en2 = self.e2(en1)  # expect: ADL001
        de1_ = self.d1(en2)
        de1 = torch.cat([en1, de1_], 1)
        return self.out_l(de1)


def train(model, loader, epochs=1):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.SmoothL1Loss()
    for _ in range(epochs):
        for ecg, target in loader:
            optimizer.zero_grad()
            loss = criterion(model(ecg), target)
            loss.backward()
            optimizer.step()


def run():
    torch.manual_seed(0)
    train(IncUNet(), [(torch.randn(2, 1, 32), torch.rand(2, 1, 32))])
