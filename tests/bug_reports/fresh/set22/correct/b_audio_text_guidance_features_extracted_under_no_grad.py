"""The same waveform guidance with the embedding method passing
`require_grad=waveforms.requires_grad` to the feature extractor, so the loss reaches the waveform.
Source: https://github.com/LAION-AI/CLAP/pull/92."""
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FRAME, HOP, N_MELS = 256, 128, 16


def audio_features(waveforms, filterbank, require_grad=False):
    context = contextlib.nullcontext if require_grad else torch.no_grad
    with context():
        frames = waveforms.unfold(-1, FRAME, HOP) * torch.hann_window(FRAME)
        power = torch.fft.rfft(frames).abs().pow(2)
        return torch.log(power @ filterbank + 1e-6)


class AudioTextModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("filterbank", torch.rand(FRAME // 2 + 1, N_MELS) / FRAME)
        self.audio_encoder = nn.Sequential(nn.Linear(N_MELS, 32), nn.Tanh(), nn.Linear(32, 8))
        self.text_table = nn.Embedding(10, 8)

    def embed_audio(self, waveforms):
        features = audio_features(waveforms, self.filterbank, require_grad=waveforms.requires_grad)
        return F.normalize(self.audio_encoder(features.mean(dim=-2)), dim=-1)

    def embed_text(self, token):
        return F.normalize(self.text_table(token), dim=-1)


model = AudioTextModel().eval().requires_grad_(False)
prompt = model.embed_text(torch.tensor([3]))

waveform = (0.1 * torch.randn(1, 4096)).requires_grad_(True)
optimizer = torch.optim.Adam([waveform], lr=1e-2)
losses = []
for step in range(5):
    optimizer.zero_grad()
    similarity = (model.embed_audio(waveform) * prompt).sum()
    loss = 1.0 - similarity
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "waveform": waveform.detach().clone()}
