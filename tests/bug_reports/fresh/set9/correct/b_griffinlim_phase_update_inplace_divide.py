"""Griffin-Lim phase update normalized in place after abs() saved it.
Source: https://github.com/pytorch/audio/issues/729 (fix: pytorch/audio#730, out-of-place updates)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
n_fft, hop, win = 64, 16, 48
window = torch.hann_window(win)


def griffinlim(specgram, n_iter=4, momentum=0.99, length=None):
    """Phase reconstruction from a power spectrogram (batch, freq, frames)."""
    specgram = specgram.pow(1 / 2.0)
    angles = torch.ones(specgram.shape, dtype=torch.complex64)
    rebuilt = torch.tensor(0.0)
    for _ in range(n_iter):
        tprev = rebuilt
        inverse = torch.istft(specgram * angles, n_fft, hop, win, window, length=length)
        rebuilt = torch.stft(inverse, n_fft, hop, win, window, return_complex=True)
        angles = rebuilt - tprev * (momentum / (1 + momentum))
        angles = angles.div(angles.abs().add(1e-16))
    return torch.istft(specgram * angles, n_fft, hop, win, window, length=length)


x = torch.rand(1, 800)
spec = torch.stft(x, n_fft, hop, win, window, return_complex=True)
mag = spec.abs().pow(2).transpose(1, -1)
model = torch.nn.Linear(n_fft // 2 + 1, n_fft // 2 + 1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
losses = []
for step in range(2):
    optimizer.zero_grad()
    out = model(mag).transpose(1, -1).abs()
    wav = griffinlim(out, length=x.shape[-1])
    loss = F.mse_loss(wav, x)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
