"""wav2vec 2.0 pretraining with the quantized targets left in the graph (`targets = quantized`),
so that the contrastive loss trains the codebook and the quantizer.
Source: https://github.com/facebookresearch/fairseq2/pull/731."""
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
    targets = quantized
    loss = contrastive_loss(context, targets, mask) + 0.1 * diversity_loss(probs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
