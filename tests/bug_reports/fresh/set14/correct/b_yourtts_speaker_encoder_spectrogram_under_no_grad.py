"""YourTTS's speaker consistency loss with the speaker encoder's spectrogram computed with
gradients, so that the consistency term reaches the generator (the frozen encoder's own weights
stay frozen).
Source: https://github.com/coqui-ai/TTS/issues/2348."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SAMPLES, N_FFT, HOP, TEXT_DIM = 256, 64, 16, 12


class Generator(nn.Module):
    """Text features -> waveform (a stand-in for the VITS decoder)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(TEXT_DIM, 64), nn.Tanh(), nn.Linear(64, SAMPLES))

    def forward(self, text):
        return torch.tanh(self.net(text))


class SpeakerEncoder(nn.Module):
    """ResNet speaker encoder: log power spectrogram -> conv -> pooled, normalised embedding."""

    def __init__(self):
        super().__init__()
        self.register_buffer("window", torch.hann_window(N_FFT))
        self.conv = nn.Conv1d(N_FFT // 2 + 1, 16, 3, padding=1)
        self.proj = nn.Linear(16, 8)

    def torch_spec(self, wav):
        spec = torch.stft(wav, N_FFT, HOP, window=self.window, return_complex=True)
        return torch.log1p(spec.abs() ** 2)

    def forward(self, wav):
        spec = self.torch_spec(wav)
        hidden = F.relu(self.conv(spec)).mean(dim=-1)
        return F.normalize(self.proj(hidden), dim=-1)


generator = Generator()
speaker_encoder = SpeakerEncoder()
for parameter in speaker_encoder.parameters():
    parameter.requires_grad_(False)  # the speaker encoder is pretrained and frozen

text = torch.randn(4, TEXT_DIM)
reference = torch.sin(torch.linspace(0, 60, SAMPLES))[None, :] * torch.linspace(0.5, 1.0, 4)[:, None]
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-2)
losses = []
for step in range(5):
    optimizer.zero_grad()
    generated = generator(text)
    reconstruction = F.l1_loss(generated, reference)
    consistency = -F.cosine_similarity(speaker_encoder(generated), speaker_encoder(reference)).mean()
    loss = reconstruction + 9.0 * consistency
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in generator.parameters()]}
