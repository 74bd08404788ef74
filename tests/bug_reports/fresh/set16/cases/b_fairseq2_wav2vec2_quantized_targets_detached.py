"""wav2vec 2.0 pretraining: a convolutional feature extractor turns the waveform into frames; a
quantizer maps each frame to a soft mixture of learned codebook entries (the targets); some
frames are replaced by a learned mask embedding and a context network encodes the sequence; the
contrastive loss asks the context vector at each masked frame to pick its own quantized target
among the other frames' targets, and a diversity loss spreads the codebook usage. The
pretraining code takes `targets = quantized.detach()` before the contrastive loss, so the
codebook entries and the quantizer's projection learn only from the diversity term: the
contrastive loss no longer shapes the codebook. Nothing is raised.
Source: https://github.com/facebookresearch/fairseq2/pull/731 ("Fix wav2vec2 target grad bug":
"We wrongfully detach `target` tensor from autograd although it is still needed for learning
the quantizer codebook entries"; the fix removes the detach).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, SAMPLES, DIM, CODES, TEMPERATURE = 2, 400, 16, 8, 0.5


class Wav2Vec2(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv1d(1, DIM, 10, stride=5), nn.GELU(),
                                               nn.Conv1d(DIM, DIM, 4, stride=4), nn.GELU())
        self.quantizer_logits = nn.Linear(DIM, CODES)
        self.codebook = nn.Parameter(torch.randn(CODES, DIM))
        self.mask_embedding = nn.Parameter(torch.rand(DIM))
        self.context = nn.GRU(DIM, DIM, batch_first=True)
        self.final_proj = nn.Linear(DIM, DIM)

    def forward(self, waveform, mask):
        features = self.feature_extractor(waveform.unsqueeze(1)).transpose(1, 2)
        probs = F.softmax(self.quantizer_logits(features), dim=-1)
        quantized = probs @ self.codebook
        masked = torch.where(mask.unsqueeze(-1), self.mask_embedding.expand_as(features), features)
        context = self.final_proj(self.context(masked)[0])
        return context, quantized, probs


def contrastive_loss(context, targets, mask):
    logits = F.cosine_similarity(context.unsqueeze(2), targets.unsqueeze(1), dim=-1) / TEMPERATURE
    frames = torch.arange(context.shape[1]).expand(context.shape[0], -1)
    return F.cross_entropy(logits[mask], frames[mask])


def diversity_loss(probs):
    average = probs.mean(dim=(0, 1))
    return (average * average.clamp_min(1e-7).log()).sum() + torch.log(torch.tensor(float(CODES)))


model = Wav2Vec2()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
waveform = torch.randn(BATCH, SAMPLES)
losses = []
for step in range(6):
    mask = torch.zeros(BATCH, 19, dtype=torch.bool)
    mask[:, (step % 3)::3] = True
    context, quantized, probs = model(waveform, mask)
    targets = quantized.detach()
    loss = contrastive_loss(context, targets, mask) + 0.1 * diversity_loss(probs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
