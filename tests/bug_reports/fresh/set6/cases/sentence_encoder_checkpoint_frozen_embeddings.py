"""Fine-tuning a small BERT-like sentence encoder with contrastive loss: the embedding layer is
frozen to save memory and the encoder layers run under gradient checkpointing with the reentrant
variant; no input of a checkpointed layer requires grad, so its output does not either and the
loss has no graph.
Source: https://github.com/huggingface/transformers/issues/21381 ("gradient checkpointing disables
requires_grad when freezing part of models (fix with use_reentrant=False)": "element 0 of tensors
does not require grad and does not have a grad_fn").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
VOCAB, DIM = 50, 32


class Encoder(nn.Module):
    def __init__(self, gradient_checkpointing=True):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, DIM)
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(DIM, 4, 64, dropout=0.0, batch_first=True)
                                     for _ in range(2)])
        self.gradient_checkpointing = gradient_checkpointing

    def forward(self, tokens):
        h = self.embeddings(tokens)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, use_reentrant=True)
            else:
                h = layer(h)
        return h.mean(1)


model = Encoder()
for p in model.embeddings.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
model.train()
losses = []
for step in range(3):
    anchors, positives = torch.randint(0, VOCAB, (6, 7)), torch.randint(0, VOCAB, (6, 7))
    a, p = F.normalize(model(anchors), dim=-1), F.normalize(model(positives), dim=-1)
    loss = F.cross_entropy(a @ p.t() / 0.05, torch.arange(6))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "layers": [p.detach().clone() for p in model.layers.parameters()]}
