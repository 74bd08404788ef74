"""Post-training a response-selection model (UMS-ResSel: a BERT-style encoder scores whether a
response follows a dialogue context, with a binary cross-entropy loss). The training step calls
`loss.backward()`, then `optimizer.step()`, and only then
`torch.nn.utils.clip_grad_norm_(model.parameters(), max_gradient_norm)`. The step has already used
the unclipped gradients, and the clipped ones are cleared before the next backward, so the clipping
never takes effect: every update is as large as the raw gradient. Nothing raises.
Source: https://github.com/taesunwhang/UMS-ResSel/issues/3 ("Maybe wrong grad clipping": "the grad
clipping should be placed before `optimizer.step`, or it will never be used"; maintainer: "as you
pointed out, it should be placed before `optimizer.step`", fixed in 825214d).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HID, CTX, RESP, BATCH = 50, 16, 8, 4, 8
MAX_GRADIENT_NORM = 0.5


class ResponseSelector(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HID)
        self.encoder = nn.TransformerEncoderLayer(HID, nhead=2, dim_feedforward=32, dropout=0.0,
                                                  batch_first=True)
        self.classifier = nn.Linear(HID, 1)

    def forward(self, context_ids, response_ids):
        tokens = torch.cat([context_ids, response_ids], dim=1)
        h = self.encoder(self.embed(tokens))
        return self.classifier(h[:, 0]).squeeze(1)


model = ResponseSelector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
losses = []
for step in range(4):
    context_ids = torch.randint(0, VOCAB, (BATCH, CTX))
    response_ids = torch.randint(0, VOCAB, (BATCH, RESP))
    labels = (torch.arange(BATCH) % 2).float()
    logits = model(context_ids, response_ids)
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    loss.backward()
    optimizer.step()
    torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_GRADIENT_NORM)
    optimizer.zero_grad()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
