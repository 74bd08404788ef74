"""Speech enhancement trained with a magnitude-spectrogram loss, the spectrogram computed the way
torchaudio's `Spectrogram(power=1)` did: the squared real and imaginary parts are summed and the
square root taken. The batch is zero-padded to a common length and the estimate is masked to
the true lengths, so the padded frames are exactly zero; the gradient of `sqrt` at 0 is infinite
and the loss's gradient there is 0, which gives NaN. Every parameter's gradient is NaN and after
the first `step()` the model is NaN. Nothing is raised.
Source: https://github.com/pytorch/audio/issues/993 ("torchaudio.transforms.Spectrogram with
power=1 can easily NaN ... your spectrogram square magnitude underflows to zero, you end up taking
backprop of sqrt(0)"; there should be an epsilon to clamp the input to sqrt).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_fft, hop = 64, 16
window = torch.hann_window(n_fft)


def magnitude_spectrogram(waveform):
    spec = torch.view_as_real(torch.stft(waveform, n_fft, hop_length=hop, window=window, return_complex=True))
    norm_sq = spec.pow(2.0).sum(-1)
    return norm_sq.sqrt()


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
