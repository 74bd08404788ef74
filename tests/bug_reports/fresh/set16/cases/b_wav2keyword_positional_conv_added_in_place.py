"""Keyword spotting on top of a wav2vec 2.0 encoder: a convolutional feature extractor, a
projection, then the transformer encoder's `extract_features`, which adds a convolutional
relative positional embedding to its input, `x_conv = self.pos_conv(x.transpose(1, 2))`, with
`x += x_conv`. The convolution saved its input, the transposed view of `x`, for backward; the
in-place add writes into `x`, and `loss.backward()` raises "one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.FloatTensor [B, C, T]],
which is output 0 of ... is at version 1; expected version 0 instead" (older PyTorch versions
computed wrong gradients without a word).
Source: https://github.com/dobby-seo/Wav2Keyword/pull/9 ("replace inplace operation in wav2vec2
module": the in-place add in fairseq's `extract_features` raised with PyTorch 1.11; the fix
writes `x = x + x_conv`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, SAMPLES, DIM, KEYWORDS = 4, 800, 24, 5


class TransformerEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos_conv = nn.Sequential(nn.Conv1d(DIM, DIM, kernel_size=5, padding=2, groups=4), nn.GELU())
        self.layer_norm = nn.LayerNorm(DIM)
        self.layer = nn.TransformerEncoderLayer(DIM, nhead=4, dim_feedforward=48, dropout=0.0, batch_first=True)

    def extract_features(self, x):
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv
        x = self.layer_norm(x)
        return self.layer(x)


class KeywordSpotter(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv1d(1, DIM, 10, stride=5), nn.GELU(),
                                               nn.Conv1d(DIM, DIM, 8, stride=4), nn.GELU())
        self.post_extract_proj = nn.Linear(DIM, DIM)
        self.encoder = TransformerEncoder()
        self.classifier = nn.Linear(DIM, KEYWORDS)

    def forward(self, waveform):
        features = self.feature_extractor(waveform.unsqueeze(1)).transpose(1, 2)
        x = self.post_extract_proj(features)
        return self.classifier(self.encoder.extract_features(x).mean(dim=1))


model = KeywordSpotter()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
waveforms = torch.randn(BATCH, SAMPLES)
keywords = torch.randint(0, KEYWORDS, (BATCH,))
losses = []
for step in range(3):
    loss = F.cross_entropy(model(waveforms), keywords)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
