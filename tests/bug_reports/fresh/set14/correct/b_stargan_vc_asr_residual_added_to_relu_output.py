"""StarGANv2-VC's ASR consistency loss with the ASR `ConvBlock` adding its residual out of place
(`x = x + res`).
Source: https://github.com/yl4579/StarGANv2-VC/pull/86."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

MELS, HIDDEN, FRAMES = 10, 16, 24


class ConvBlock(nn.Module):
    def __init__(self, hidden_dim, n_conv=2, dropout_p=0.2):
        super().__init__()
        self.blocks = nn.ModuleList([self._get_conv(hidden_dim, 3 ** i, dropout_p) for i in range(n_conv)])

    def forward(self, x):
        for block in self.blocks:
            res = x
            x = block(x)
            x = x + res
        return x

    def _get_conv(self, hidden_dim, dilation, dropout_p):
        return nn.Sequential(
            nn.Conv1d(hidden_dim, hidden_dim, 3, padding=dilation, dilation=dilation),
            nn.ReLU(),
            nn.GroupNorm(num_groups=4, num_channels=hidden_dim),
            nn.Dropout(p=dropout_p),
            nn.Conv1d(hidden_dim, hidden_dim, 3, padding=1),
            nn.ReLU(),
            nn.Dropout(p=dropout_p),
        )


class ASRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_hidden = nn.Conv1d(MELS, HIDDEN, 1)
        self.cnns = ConvBlock(HIDDEN)

    def get_feature(self, mel):
        return self.cnns(self.to_hidden(mel))


generator = nn.Sequential(nn.Conv1d(MELS, 32, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv1d(32, MELS, 3, padding=1))
asr = ASRCNN()
asr.eval()
for parameter in asr.parameters():
    parameter.requires_grad_(False)

real = torch.randn(3, MELS, FRAMES)
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
losses = []
for step in range(4):
    optimizer.zero_grad()
    fake = generator(real)
    with torch.no_grad():
        asr_real = asr.get_feature(real)
    asr_fake = asr.get_feature(fake)
    loss = F.l1_loss(asr_fake, asr_real) + 0.1 * F.l1_loss(fake, real)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in generator.parameters()]}
