"""Text recognition model with an attention decoder (mindee/doctr, the SAR and MASTER PyTorch
models): `compute_loss` masked the per-character cross-entropy after each word's end, averaged it
over each word's length, and returned one loss per word (`ce_loss.unsqueeze(1)`, shape [B, 1]);
the training loop's `loss.backward()` on that tensor raises, since backward() without an explicit
gradient needs a scalar.
Source: https://github.com/mindee/doctr/pull/379 ("RuntimeError: grad can be implicitly created
only for scalar outputs" when training; merged fix: `return ce_loss.mean()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, MAX_LEN, DIM, BATCH = 11, 6, 16, 4


class TinyRecognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d((1, MAX_LEN)))
        self.decoder = nn.GRU(8, DIM, batch_first=True)
        self.classifier = nn.Linear(DIM, VOCAB)

    def forward(self, crops):
        columns = self.features(crops).squeeze(2).transpose(1, 2)  # (batch, MAX_LEN, 8)
        hidden, _ = self.decoder(columns)
        return self.classifier(hidden)

    @staticmethod
    def compute_loss(logits, gt, seq_len):
        cce = F.cross_entropy(logits.permute(0, 2, 1), gt, reduction="none")  # (batch, MAX_LEN)
        mask_2d = torch.arange(MAX_LEN)[None, :] >= seq_len[:, None]
        cce[mask_2d] = 0
        ce_loss = cce.sum(1) / seq_len.to(dtype=torch.float32)
        return ce_loss.unsqueeze(1)


model = TinyRecognizer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
crops = torch.randn(BATCH, 1, 8, 24)
gt = torch.randint(0, VOCAB, (BATCH, MAX_LEN))
seq_len = torch.tensor([6, 3, 4, 2])

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = model.compute_loss(model(crops), gt, seq_len)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
