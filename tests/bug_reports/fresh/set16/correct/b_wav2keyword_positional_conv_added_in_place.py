"""The keyword spotter with the positional convolution added out of place (`x = x + x_conv`).
Source: https://github.com/dobby-seo/Wav2Keyword/pull/9."""
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
        x = x + x_conv
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
