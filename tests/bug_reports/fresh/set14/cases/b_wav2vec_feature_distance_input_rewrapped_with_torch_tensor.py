"""A wav2vec feature-space distance used as a loss (fairseq's `Wav2VecModel.feature_extractor`):
the user synthesises a sine whose frequency `fp` requires grad and fits it to a 440 Hz target by
descending the mean absolute difference of the two waveforms' wav2vec features. The helper
`extractor(x)` passes `torch.tensor(x.view(1, -1))` to the feature extractor: `torch.tensor()`
copies the values into a new leaf without a graph. The distance still requires grad (through the
extractor's own weights), so `backward()` runs, but `fp.grad` stays None and the optimizer never
moves the frequency (no error; only PyTorch's generic copy-construct UserWarning).
Source: https://github.com/facebookresearch/fairseq/issues/2789 ("Unable to compute the gradient of
the wav2vec encoder": `fp.grad` prints None; the input must be passed without re-wrapping it).
expect: silent"""
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
    return model(torch.tensor(x.view(1, -1)))


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
