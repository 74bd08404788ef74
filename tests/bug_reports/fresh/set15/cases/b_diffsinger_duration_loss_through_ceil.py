"""A singing-voice variance model (DiffSinger) with a stochastic duration predictor: the predictor
gives log durations per phoneme; the model turns them into frame counts with
`torch.ceil(torch.exp(log_dur) - 1)` (frames must be whole), and the duration loss `sdp_dur_loss`
compares those rounded counts with the target counts in log space. `ceil` is flat almost
everywhere: its gradient is zero, so the duration loss sends a zero gradient to the predictor
(not None: every `.grad` is a tensor of zeros), the predictor never learns from it while the pitch
loss trains the shared encoder, and nothing is raised.
Source: https://github.com/openvpi/DiffSinger/pull/303 ("Fixed the bug where `torch.ceil` caused
`sdp_dur_loss` to lose its gradient": the loss is taken on the unrounded prediction).
expect: silent"""
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
    predicted_frames = torch.ceil(torch.exp(log_dur) - 1).clamp(min=0)
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
