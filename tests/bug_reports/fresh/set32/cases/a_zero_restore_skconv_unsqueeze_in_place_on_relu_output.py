"""Zero-Restore (zero-shot underwater / haze / low-light restoration): the underwater model's
`SKConv` runs its input through several branches (the first is `InConv`, whose last layer is
`nn.ReLU(inplace=False)`) and stacks them with `fea = conv(x).unsqueeze_(dim=1)`. `unsqueeze_`
changes the ReLU output in place, and ReLU keeps its output for backward, so the first
`loss.backward()` of `UnderWaterZeroShot.py` fails with "one of the variables needed for gradient
computation has been modified by an inplace operation: ... output 0 of ReluBackward0, is at
version 1; expected version 0". Turning the ReLUs to `inplace=False` did not help. The
maintainer's answer: add `.clone()` in SKConv's forward before the in-place unsqueeze.
Source: https://github.com/aupendu/zero-restore/issues/7
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InConv(nn.Module):
    def __init__(self, out_ch=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, out_ch, 3, stride=2, padding=1, bias=False),
                                  nn.GroupNorm(num_channels=out_ch, num_groups=4), nn.ReLU(inplace=True))
        self.convf = nn.Sequential(nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False),
                                   nn.GroupNorm(num_channels=out_ch, num_groups=4), nn.ReLU(inplace=False))

    def forward(self, x):
        channels = [torch.unsqueeze(self.conv(x[:, c:c + 1]), 1) for c in range(3)]
        x, _ = torch.min(torch.cat(channels, 1), dim=1)
        return self.convf(x)


class SKConv(nn.Module):
    def __init__(self, outfeatures=16, M=2, L=8):
        super().__init__()
        in_conv = InConv(outfeatures)
        self.convs = nn.ModuleList([in_conv])
        for i in range(1, M):
            self.convs.append(nn.Sequential(nn.Upsample(scale_factor=1 / (2 ** i), mode='bilinear', align_corners=True),
                                            in_conv,
                                            nn.Upsample(scale_factor=2 ** i, mode='bilinear', align_corners=True)))
        self.fc = nn.Linear(outfeatures, L)
        self.fcs = nn.ModuleList([nn.Linear(L, outfeatures) for _ in range(M)])
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        for i, conv in enumerate(self.convs):
            fea = conv(x).unsqueeze_(dim=1)
            feas = fea if i == 0 else torch.cat([feas, fea], dim=1)
        fea_z = self.fc(torch.sum(feas, dim=1).mean(-1).mean(-1))
        for i, fc in enumerate(self.fcs):
            vector = fc(fea_z).unsqueeze_(dim=1)
            attention_vectors = vector if i == 0 else torch.cat([attention_vectors, vector], dim=1)
        attention_vectors = self.softmax(attention_vectors).unsqueeze(-1).unsqueeze(-1)
        return (feas * attention_vectors).sum(dim=1)


class MainModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.InConv = SKConv()
        self.OutConv = nn.Conv2d(16, 3, 3, padding=1, bias=False)
        self.up = nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)
        self.dense = nn.Linear(16, 3, bias=False)

    def forward(self, x):
        xmin = self.InConv(x)
        trans = torch.sigmoid(self.OutConv(self.up(xmin))) + 1e-12
        atm = torch.sigmoid(self.dense(xmin.mean(-1).mean(-1)))[:, :, None, None].expand_as(x)
        out = (x - (1 - trans) * atm) / trans
        return trans, atm, out


model = MainModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
image = torch.rand(1, 3, 16, 16)
losses = []
for it in range(3):
    trans, atm, out = model(image)
    loss = F.mse_loss(trans * out + (1 - trans) * atm, image) + 0.1 * out.clamp(max=0).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
