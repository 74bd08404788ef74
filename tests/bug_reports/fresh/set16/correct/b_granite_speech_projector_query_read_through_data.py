"""The speech-to-text projector reading its learned queries as the Parameter itself
(`self.query.expand(...)`), so that they train with the rest of the model.
Source: https://github.com/huggingface/transformers/pull/38833."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

MELS, HIDDEN, QUERIES, WINDOW, VOCAB, BATCH, FRAMES = 16, 32, 2, 5, 11, 4, 20


class EncoderProjector(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Parameter(torch.randn(1, QUERIES, HIDDEN) * 0.5)
        self.attention = nn.MultiheadAttention(HIDDEN, num_heads=4, batch_first=True)
        self.linear = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, hidden_states):
        batch, frames, dim = hidden_states.shape
        windows = hidden_states.reshape(batch * frames // WINDOW, WINDOW, dim)
        query = self.query.expand(windows.shape[0], -1, -1)
        attended, _ = self.attention(query, windows, windows)
        return self.linear(attended).reshape(batch, -1, dim)


class SpeechToText(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(MELS, HIDDEN), nn.GELU(), nn.Linear(HIDDEN, HIDDEN))
        self.projector = EncoderProjector()
        self.lm_head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, mels):
        return self.lm_head(self.projector(self.encoder(mels)))


model = SpeechToText()
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
mels = torch.randn(BATCH, FRAMES, MELS)
targets = torch.randint(0, VOCAB, (BATCH, FRAMES // WINDOW * QUERIES))
losses = []
for step in range(6):
    logits = model(mels)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
