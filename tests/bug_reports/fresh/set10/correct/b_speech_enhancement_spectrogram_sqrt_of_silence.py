"""Magnitude spectrogram as sqrt of the summed squares: NaN gradients on silent frames.
Source: https://github.com/pytorch/audio/issues/993 (clamp the input to sqrt with an epsilon)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_fft, hop = 64, 16
window = torch.hann_window(n_fft)


def magnitude_spectrogram(waveform):
    spec = torch.view_as_real(torch.stft(waveform, n_fft, hop_length=hop, window=window, return_complex=True))
    norm_sq = spec.pow(2.0).sum(-1)
    return norm_sq.clamp(min=1e-10).sqrt()


enhancer = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.Tanh(), nn.Conv1d(8, 1, 9, padding=4))
optimizer = torch.optim.Adam(enhancer.parameters(), lr=1e-3)
lengths = torch.tensor([512, 320])
mask = (torch.arange(512)[None, :] < lengths[:, None]).float()
clean = torch.randn(2, 512) * 0.1 * mask
noisy = clean + 0.05 * torch.randn(2, 512) * mask
losses = []
for step in range(3):
    estimate = enhancer(noisy.unsqueeze(1)).squeeze(1) * mask
    loss = F.l1_loss(magnitude_spectrogram(estimate), magnitude_spectrogram(clean))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in enhancer.parameters()]}
