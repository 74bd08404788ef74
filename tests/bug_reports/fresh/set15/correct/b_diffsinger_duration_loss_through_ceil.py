"""A singing-voice variance model whose duration loss is taken on the unrounded predicted
durations, so the duration predictor receives a gradient, as the fix does.
Source: https://github.com/openvpi/DiffSinger/pull/303."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

PHONEMES, VOCAB, HIDDEN = 12, 20, 16


class VarianceModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.encoder = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.Tanh())
        self.duration_predictor = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))
        self.pitch_head = nn.Linear(HIDDEN, 1)

    def forward(self, tokens):
        hidden = self.encoder(self.embedding(tokens))
        log_dur = self.duration_predictor(hidden).squeeze(-1)
        pitch = self.pitch_head(hidden).squeeze(-1)
        return log_dur, pitch


def sdp_dur_loss(log_dur, target_frames):
    predicted_frames = (torch.exp(log_dur) - 1).clamp(min=0)
    return F.mse_loss(torch.log1p(predicted_frames), torch.log1p(target_frames))


tokens = torch.randint(0, VOCAB, (4, PHONEMES))
target_frames = torch.randint(1, 30, (4, PHONEMES)).float()
target_pitch = torch.randn(4, PHONEMES)
model = VarianceModel()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
losses = []
for step in range(6):
    optimizer.zero_grad()
    log_dur, pitch = model(tokens)
    loss = sdp_dur_loss(log_dur, target_frames) + F.mse_loss(pitch, target_pitch)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
