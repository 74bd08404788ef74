"""A speech-enhancement mask network whose spectral magnitude adds a small eps to the squared
magnitude before the power (as speechbrain's fix does), so silent frames have a finite derivative.
Source: https://github.com/speechbrain/speechbrain/pull/184."""
import torch
import torch.nn as nn

torch.manual_seed(0)

N_FFT, HOP, POWER = 64, 16, 0.5
WINDOW = torch.hann_window(N_FFT)


def spectral_magnitude(signal):
    spectrum = torch.view_as_real(torch.stft(signal, N_FFT, HOP, window=WINDOW, return_complex=True))
    return (spectrum.pow(2).sum(-1) + 1e-14).pow(POWER)


class MaskNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.ReLU(), nn.Conv1d(8, 1, 9, padding=4))

    def forward(self, noisy):
        return torch.sigmoid(self.net(noisy.unsqueeze(1))).squeeze(1) * noisy


time = torch.arange(1024) / 8000.0
clean = torch.stack([torch.sin(2 * torch.pi * f * time) for f in (220.0, 330.0, 440.0, 550.0)])
noisy = clean + 0.3 * torch.randn(clean.shape)
lengths = [1024, 768, 640, 896]
for row, length in enumerate(lengths):
    clean[row, length:] = 0.0
    noisy[row, length:] = 0.0

model = MaskNetwork()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(4):
    enhanced = model(noisy)
    loss = (spectral_magnitude(enhanced) - spectral_magnitude(clean)).abs().mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
