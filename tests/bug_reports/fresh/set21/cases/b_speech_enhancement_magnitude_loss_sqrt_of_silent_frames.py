"""A speech-enhancement mask network trained with an L1 loss between the spectral magnitudes of
the enhanced and the clean signal. The magnitude is (real**2 + imag**2) ** power with power 0.5.
The batch holds utterances padded with digital silence, so the enhanced signal (mask * noisy) is
exactly zero over whole frames: their squared magnitude is 0, the derivative of x ** 0.5 there is
infinite, and infinite times the zero derivative of real**2 is NaN. The loss is finite, the
gradient is NaN, and after the first step the mask network's weights and every loss are NaN;
nothing raises.
Source: https://github.com/speechbrain/speechbrain/issues/181 ("Spectral magnitude makes NaN when
using power=0.5": an enhancement loss on stft+magnitude of enhanced and clean signals gives NaN;
fixed in https://github.com/speechbrain/speechbrain/pull/184 by adding a small eps before the
power).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

N_FFT, HOP, POWER = 64, 16, 0.5
WINDOW = torch.hann_window(N_FFT)


def spectral_magnitude(signal):
    spectrum = torch.view_as_real(torch.stft(signal, N_FFT, HOP, window=WINDOW, return_complex=True))
    return spectrum.pow(2).sum(-1).pow(POWER)


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
