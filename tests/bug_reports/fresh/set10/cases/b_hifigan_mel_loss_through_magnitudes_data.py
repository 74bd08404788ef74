"""HiFi-GAN generator trained with an adversarial term plus a mel-spectrogram L1 term (weight
45). The mel helper, a port of the repository's `stft.mel_spectrogram`, takes
`magnitudes = magnitudes.data` after the STFT, so the fake mel carries no graph back to the
generator: the mel loss trains nothing and only the adversarial term reaches the generator.
Nothing is raised; the total loss is still a tensor with a grad_fn.
Source: https://github.com/rishikksh20/HiFi-GAN/issues/8 ("`magnitudes = magnitudes.data` which
basically removes gradient ... `loss_mel` not having a gradient function and it won't contribute
to training"; fix: https://github.com/rishikksh20/HiFi-GAN/pull/9, keep the gradient in training).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n_fft, hop, n_mels = 64, 16, 20
window = torch.hann_window(n_fft)
mel_basis = torch.rand(n_mels, n_fft // 2 + 1)


def mel_spectrogram(audio):
    spec = torch.stft(audio, n_fft, hop_length=hop, window=window, return_complex=True)
    magnitudes = spec.abs()
    magnitudes = magnitudes.data
    mel = torch.matmul(mel_basis, magnitudes)
    return torch.log(torch.clamp(mel, min=1e-5))


generator = nn.Sequential(
    nn.Conv1d(n_mels, 32, 3, padding=1), nn.LeakyReLU(0.1), nn.ConvTranspose1d(32, 1, hop, stride=hop)
)
discriminator = nn.Sequential(
    nn.Conv1d(1, 8, 15, stride=4, padding=7), nn.LeakyReLU(0.1), nn.Conv1d(8, 1, 3, padding=1)
)
opt_g = torch.optim.AdamW(generator.parameters(), lr=2e-4, betas=(0.8, 0.99))
audio = torch.randn(2, 256) * 0.1
mel = mel_spectrogram(audio)
losses = []
for step in range(3):
    fake_audio = generator(mel)[:, :, : audio.shape[1]]
    mel_fake = mel_spectrogram(fake_audio.squeeze(1))
    loss_adv = torch.mean((discriminator(fake_audio) - 1) ** 2)
    loss_mel = F.l1_loss(mel_fake, mel) * 45
    loss_g = loss_adv + loss_mel
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    losses.append(loss_g.detach())
result = {"losses": losses, "generator": [p.detach().clone() for p in generator.parameters()]}
