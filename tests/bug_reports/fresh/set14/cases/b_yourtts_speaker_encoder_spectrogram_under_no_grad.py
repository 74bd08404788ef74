"""YourTTS's speaker consistency loss (Coqui TTS, `TTS/encoder/models/resnet.py`): a frozen speaker
encoder embeds the generated waveform and the reference waveform, and the loss asks their
cosine similarity to be high, so that the generator learns the target speaker's voice. The
encoder computes its input spectrogram inside `with torch.no_grad():` (`torch_spec`), so the
embedding of the generated audio carries no graph: the consistency term is a constant added to
the total loss, `backward()` runs, and the generator is trained by the reconstruction loss alone
(no error, no warning).
Source: https://github.com/coqui-ai/TTS/issues/2348 ("[Bug] No grad in YourTTS speaker encoder":
the spectrogram is extracted with no grads, so the speaker consistency loss has no effect).
expect: silent"""
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
        with torch.no_grad():
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
