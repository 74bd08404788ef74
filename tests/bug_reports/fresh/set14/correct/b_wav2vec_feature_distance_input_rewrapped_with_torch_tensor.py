"""A wav2vec feature-space distance used as a loss, with the waveform passed to the feature
extractor as it is (`x.view(1, -1)`), so that the frequency `fp` receives its gradient.
Source: https://github.com/facebookresearch/fairseq/issues/2789."""
import torch
import torch.nn as nn

torch.manual_seed(0)

SAMPLES = 1600
time = torch.linspace(0.0, 0.1, SAMPLES)


class FeatureExtractor(nn.Module):
    """wav2vec's convolutional feature extractor, reduced to three strided conv layers."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Conv1d(1, 16, 10, stride=5), nn.GroupNorm(1, 16), nn.GELU(),
            nn.Conv1d(16, 16, 8, stride=4), nn.GELU(),
            nn.Conv1d(16, 16, 4, stride=2), nn.GELU(),
        )

    def forward(self, wav):
        return self.layers(wav.unsqueeze(1))


model = FeatureExtractor()
model.eval()


def sine(frequency):
    return 0.5 * torch.cos(frequency * 2.0 * 3.14 * time)


def extractor(x):
    return model(x.view(1, -1))


target = torch.tensor(440.0)
fp = torch.tensor(452.0, requires_grad=True)
optimizer = torch.optim.Adam([fp], lr=1.0)
distances, frequencies = [], []
for step in range(6):
    optimizer.zero_grad()
    dist = torch.mean(torch.abs(extractor(sine(target)) - extractor(sine(fp))))
    dist.backward()
    optimizer.step()
    distances.append(dist.detach())
    frequencies.append(fp.detach().clone())

result = {"distances": torch.stack(distances), "frequencies": torch.stack(frequencies)}
